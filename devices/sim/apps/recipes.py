"""The recipes app: recipes to search and favourite; star ratings are given on screen only."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, integer, string
from devices.sim.apps.common import match_fields, require
from devices.sim.apps.crud import flag_tool, get_tool, list_tool, search_tool
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, tool

__all__ = ["LABEL", "ROOT", "SCREENS"]


search_tool("recipes.search", "Find recipes by title, cuisine or ingredient.", "Recipe records.", "recipes",
            match_fields(("title", "cuisine", "ingredients")),
            where=lambda r, args: r["minutes"] <= args.get("max_minutes", 10_000),
            optional={"max_minutes": integer("Longest cooking time.", minimum=1)})


get_tool("recipes.get", "recipes", "recipe", "Recipe id.")


flag_tool("recipes.set_favorite", "Mark or unmark a recipe as a favourite.", "The recipe record.", "recipes",
          "recipe", "Recipe id.", "favorite", boolean("True to mark."))


list_tool("recipes.list_favorites", "List my favourite recipes.", "Recipe records.", "recipes",
          where=lambda r, args: r["favorite"])


@tool("recipes.scale", "The ingredient list of a recipe for another number of servings.",
      "{'servings', 'ingredients'}.", {"id": string("Recipe id.", minLength=1),
                                        "servings": integer("Servings.", minimum=1, maximum=40)})
def scale(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "recipes", "recipes", args["id"], "recipe")
    if not row["servings"]:
        raise BadArguments("This recipe has no serving size to scale from.")
    factor = args["servings"] / row["servings"]
    return {"servings": args["servings"], "factor": round(factor, 3), "ingredients": list(row["ingredients"])}


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["recipes"]
ROOT = "list"


def _stars(b: Any, state: SimState, row: dict[str, Any]) -> None:
    for n in range(1, 6):
        def rate(g: Any, i: str = row["id"], n: int = n) -> str:
            g.state.update("recipes", "recipes", i, {"rating": n})
            return f"Rated {n} stars."

        b.button(f"Rate {n} star{'s' if n > 1 else ''}", f"rate_{n}", rate)


SCREENS = record_screens(
    "recipes", "recipes", "Recipes", row_title=lambda r: r["title"],
    row_subtitle=lambda r: f"{r['cuisine']} · {r['minutes']} min", search=("title", "cuisine", "ingredients"),
    order=lambda r: r["title"],
    lines=lambda r: [("Cuisine", r["cuisine"], "cuisine"), ("Time", f"{r['minutes']} min", "minutes"),
                     ("Rating", r["rating"] or "not rated", "rating")], extra=_stars, what="recipe")
