"""The human gate: reviewers admit data in a browser; decisions are Ed25519-signed events.

`verify.DecisionVerifier` is the seam the curator calls before admitting anything;
`policy.AdmissionPolicy` decides what needs a person; `app.create_app` is the web app and
`launch.start_gate` starts it next to the loop.
"""
