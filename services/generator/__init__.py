"""The generator service: proposes train tasks over a target mix, constructs and verifies
new tasks, and shifts the mix toward weak slices when training feedback arrives."""
