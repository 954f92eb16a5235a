"""The music app: a track library and playlists; liking a track is only possible on screen."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import match_fields, out, require
from devices.sim.apps.crud import change_tool, delete_tool, get_tool, list_tool, search_tool
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import Conflict, NotFound, tool

__all__ = ["LABEL", "ROOT", "SCREENS"]


search_tool("music.search", "Find tracks by title, artist or album.", "Track records.", "tracks",
            match_fields(("title", "artist", "album")))


get_tool("music.get_track", "tracks", "track", "Track id.")


list_tool("music.list_playlists", "List playlists with their track ids.", "Playlist records.", "playlists")


@tool("music.create_playlist", "Create an empty playlist.", "The playlist record.",
      {"name": string("Playlist name.", minLength=1)})
def create_playlist(state: SimState, args: dict[str, Any]) -> Any:
    if any(r["name"].lower() == args["name"].lower() for r in state.table("music", "playlists").values()):
        raise Conflict(f"A playlist named '{args['name']}' exists already.")
    row = {"id": state.new_id("music", "playlists"), "name": args["name"], "track_ids": []}
    return out(state.put("music", "playlists", row))


@tool("music.add_to_playlist", "Add a track to a playlist.", "The playlist record.",
      {"playlist_id": string("Playlist id.", minLength=1), "track_id": string("Track id.", minLength=1)})
def add_to_playlist(state: SimState, args: dict[str, Any]) -> Any:
    playlist = require(state, "music", "playlists", args["playlist_id"], "playlist")
    require(state, "music", "tracks", args["track_id"], "track")
    if args["track_id"] in playlist["track_ids"]:
        raise Conflict("That track is already in the playlist.")
    return out(state.update("music", "playlists", playlist["id"],
                            {"track_ids": [*playlist["track_ids"], args["track_id"]]}))


@tool("music.remove_from_playlist", "Take a track out of a playlist.", "The playlist record.",
      {"playlist_id": string("Playlist id.", minLength=1), "track_id": string("Track id.", minLength=1)})
def remove_from_playlist(state: SimState, args: dict[str, Any]) -> Any:
    playlist = require(state, "music", "playlists", args["playlist_id"], "playlist")
    if args["track_id"] not in playlist["track_ids"]:
        raise NotFound("That track is not in the playlist.")
    return out(state.update("music", "playlists", playlist["id"],
                            {"track_ids": [t for t in playlist["track_ids"] if t != args["track_id"]]}))


change_tool("music.rename_playlist", "Rename a playlist.", "The playlist record.", "playlists", "playlist",
            "Playlist id.", lambda args: {"name": args["name"]}, {"name": string("New name.", minLength=1)})


delete_tool("music.delete_playlist", "Delete a playlist.", "The deleted playlist.",
            "playlists", "playlist", "Playlist id.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["music"]
ROOT = "list"


def _like(b: Any, state: SimState, row: dict[str, Any]) -> None:
    def flip(g: Any, i: str = row["id"], liked: bool = row["liked"]) -> str:
        g.state.update("music", "tracks", i, {"liked": not liked})
        return "Added to Liked songs." if not liked else "Removed from Liked songs."

    b.switch("Liked", "liked", row["liked"], flip)


SCREENS = record_screens(
    "music", "tracks", "Library", row_title=lambda r: r["title"],
    row_subtitle=lambda r: f"{r['artist']} · {r['album']}", search=("title", "artist", "album"),
    order=lambda r: (r["artist"], r["title"]),
    lines=lambda r: [("Artist", r["artist"], "artist"), ("Album", r["album"], "album"),
                     ("Length", f"{r['minutes']} min", "length")], extra=_like, what="track")
