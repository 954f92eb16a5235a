"""Tool templates about daily life: health, music, recipes, weather, reminders, clock, notes,
settings, files and maps. Two need the GUI (liking a song, rating a recipe), because no tool
covers that step.
"""

from __future__ import annotations

from typing import Any

from devices.suite.diff import Add, AnswerIs, Called, Remove, RemoveOneOf, Setting, Update, mentions
from devices.suite.templates._vocab import (
    ACTIVITY,
    ALBUMS3,
    ARTISTS,
    CITIES,
    CUISINES,
    DELTAS,
    DISHES,
    INGREDIENTS,
    LABELS3,
    MEDS,
    PLACES3,
    SONGS,
    SPANS,
    TAGS3,
    TASKS,
    TIMES3,
    TITLES3,
    TOPICS3,
)
from devices.suite.templates._world import (
    DURATIONS,
    RELATIONS,
    World,
    WorldTemplate,
    call,
    cart_cheapest,
    date_from,
    day_of,
    earliest_from,
    find_rows,
    finish,
    gui_steps,
    lookup,
    minute_of,
    note_titled,
    now_of,
    one,
    person_by_relation,
    shift,
    tagged,
    tap,
    weekday_date,
    weekday_name,
)
from schemas.actions import InputText

__all__ = ["TEMPLATES"]

# How goals say a travel mode, and the maps mode it means.
_MODES = {"on foot": "walk", "by car": "drive", "by public transport": "transit"}
_SPAN_DAYS = {"a week": 7, "two weeks": 14, "three weeks": 21, "ten days": 10, "twelve days": 12,
              "nine days": 9, "eleven days": 11}
_SHORT = ("half an hour", "a quarter of an hour", "three quarters of an hour", "twenty minutes", "an hour")


# ---- health ------------------------------------------------------------------------------------

class LogActivity(WorldTemplate):
    name = "log_activity"
    apps = ("health",)
    tier = "easy"
    needs_lookup = False
    goal_template = "Log {duration} of {activity} for {day}."

    def build(self, w: World) -> dict[str, Any]:
        duration, activity, day = w.nth(list(DURATIONS), ACTIVITY, ("today", "yesterday"))
        return {"duration": duration, "activity": activity, "day": day,
                "_date": w.today if day == "today" else w.day(-1)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("health", "activities", {"kind": p["activity"], "minutes": DURATIONS[p["duration"]],
                                             "date": p["_date"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        back = 0 if p["day"] == "today" else 1
        yield call("health.log_activity", kind=p["activity"], minutes=DURATIONS[p["duration"]],
                   date=day_of(observe, -back))


class DuplicateActivity(WorldTemplate):
    name = "duplicate_activity"
    apps = ("health",)
    tier = "medium"
    chain = 1
    lookups = ("health.list_activities",)
    goal_template = ("I logged yesterday's {activity} twice; delete the extra entry, then log today's "
                     "{duration} of it.")

    def build(self, w: World) -> dict[str, Any]:
        kind = w.draw(ACTIVITY)
        minutes = w.rng.randint(20, 90)
        twins = [w.add("health", "activities", "ha", kind=kind, minutes=minutes, date=w.day(-1), calories=minutes * 5)
                 for _ in range(2)]
        w.add("health", "activities", "ha", kind=kind, minutes=minutes, date=w.day(-2), calories=minutes * 5)
        w.add("health", "activities", "ha", kind="walk" if kind != "walk" else "run", minutes=minutes,
              date=w.day(-1), calories=minutes * 4)
        return {"activity": kind, "duration": w.pick(list(DURATIONS)), "_ids": [t["id"] for t in twins],
                "_today": w.today}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [RemoveOneOf("health", "activities", tuple(p["_ids"])),
                Add("health", "activities", {"kind": p["activity"], "minutes": DURATIONS[p["duration"]],
                                             "date": p["_today"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        yesterday = day_of(observe, -1)
        rows = yield from lookup(observe, call("health.list_activities", kind=p["activity"], date=yesterday))
        if len(find_rows(rows)) == 2:
            yield call("health.delete_activity", id=rows[0]["id"])
            yield call("health.log_activity", kind=p["activity"], minutes=DURATIONS[p["duration"]],
                       date=day_of(observe))


def _meds(w: World, n: int = 3) -> list[dict[str, Any]]:
    return [w.add("health", "medications", "md", name=name, dose=f"{w.pick([5, 10, 20, 500])} mg",
                  time=f"{w.rng.randint(7, 21):02d}:{w.pick(['00', '30'])}", active=True)
            for name in w.draw(MEDS, n)]


class MedicationLater(WorldTemplate):
    name = "medication_later"
    apps = ("health",)
    tier = "easy"
    chain = 1
    lookups = ("health.list_medications",)
    goal_template = "Move my {med} reminder {duration} later."

    def build(self, w: World) -> dict[str, Any]:
        target = _meds(w)[0]
        target["time"] = f"{w.rng.randint(7, 20):02d}:{w.pick(['00', '15', '30'])}"
        duration = w.pick(list(_SHORT))
        return {"med": target["name"], "duration": duration, "_id": target["id"],
                "_time": shift(target["time"], DURATIONS[duration])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("health", "medications", p["_id"], {"time": p["_time"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("health.list_medications"))
        med = one(rows, name=p["med"])
        if med:
            yield call("health.update_medication", id=med["id"], time=shift(med["time"], DURATIONS[p["duration"]]))


class StopMedication(WorldTemplate):
    name = "stop_medication"
    apps = ("health",)
    tier = "easy"
    chain = 1
    test_only = True
    lookups = ("health.list_medications",)
    goal_template = "I've stopped taking {med}; turn its reminder off."

    def build(self, w: World) -> dict[str, Any]:
        target = _meds(w)[1]
        return {"med": target["name"], "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("health", "medications", p["_id"], {"active": False})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("health.list_medications"))
        med = one(rows, name=p["med"])
        if med:
            yield call("health.update_medication", id=med["id"], active=False)


class WeightLost(WorldTemplate):
    name = "weight_lost"
    apps = ("health",)
    tier = "medium"
    chain = 1
    checker = "state_and_answer"
    lookups = ("health.list_measurements",)
    goal_template = ("Log my weight today as {today_kg} kg, then tell me how many kilos I've lost since "
                     "{span} ago, with one decimal.")

    def build(self, w: World) -> dict[str, Any]:
        span = w.draw(SPANS)
        days = _SPAN_DAYS[span]
        start = round(w.rng.uniform(70, 95), 1)
        values = {}
        for back in sorted({*range(days + 7, -1, -7), days, 0}, reverse=True):
            values[back] = round(start - (days + 7 - back) * w.rng.uniform(0.02, 0.1), 1)
        today_kg = values.pop(0)
        for back, value in values.items():
            w.add("health", "measurements", "hm", kind="weight_kg", value=value, date=w.day(-back))
        return {"today_kg": today_kg, "span": span, "_lost": round(values[days] - today_kg, 1),
                "_today": w.today}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_lost"]),
                Add("health", "measurements", {"kind": "weight_kg", "value": p["today_kg"], "date": p["_today"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        days = _SPAN_DAYS[p["span"]]
        now = now_of(observe)
        yield call("health.log_measurement", kind="weight_kg", value=p["today_kg"], date=date_from(now))
        rows = yield from lookup(observe, call("health.list_measurements", kind="weight_kg"))
        by_date = {r["date"]: r["value"] for r in find_rows(rows)}
        then, today = date_from(now, -days), date_from(now)
        if then in by_date and today in by_date:
            yield finish(f"{by_date[then] - by_date[today]:.1f}")


class SleepAverage(WorldTemplate):
    name = "sleep_average"
    apps = ("health",)
    tier = "easy"
    chain = 1
    checker = "state_and_answer"
    test_only = True
    lookups = ("health.list_measurements",)
    goal_template = "What was my average sleep over the last {n} nights, in hours with one decimal?"

    def build(self, w: World) -> dict[str, Any]:
        n = w.rng.randint(3, 6)
        values = [round(w.rng.uniform(5, 9), 1) for _ in range(n + 3)]
        for back, value in enumerate(values, start=1):
            w.add("health", "measurements", "hm", kind="sleep_hours", value=value, date=w.day(-back))
        return {"n": n, "_avg": round(sum(values[:n]) / n, 1), "_nights": values[:n]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_avg"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        now = now_of(observe)
        want = {date_from(now, -k) for k in range(1, p["n"] + 1)}
        rows = yield from lookup(observe, call("health.list_measurements", kind="sleep_hours"))
        values = [r["value"] for r in find_rows(rows) if r["date"] in want]
        if len(values) == p["n"]:
            yield finish(f"{round(sum(values) / len(values), 1):.1f}")


# ---- music -------------------------------------------------------------------------------------

def _track(w: World, title: str, artist: str, album: str) -> dict[str, Any]:
    return w.track(title, artist, album, w.rng.randint(2, 6))


class LikeSongGui(WorldTemplate):
    name = "like_song_gui"
    apps = ("music",)
    tier = "hard"
    chain = 1
    gui = True
    goal_template = "Like the song {song} by {artist}."

    def build(self, w: World) -> dict[str, Any]:
        song, second = w.draw(SONGS, 2)
        artist, cover = w.draw(ARTISTS, 2)
        album, other = w.draw(ALBUMS3, 2)
        target = _track(w, song, artist, album)
        _track(w, song, cover, other)
        _track(w, second, artist, album)
        return {"song": song, "artist": artist, "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("music", "tracks", p["_id"], {"liked": True})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        yield from gui_steps(observe, "Music", [])
        field = tap(observe(), rid="/search")
        if field is None:
            return
        yield InputText(index=field.index, text=p["song"])
        ok = yield from _taps(observe, [{"startswith": f"{p['artist']} · "}, {"rid": "/liked"}])
        return ok


def _taps(observe: Any, steps: list[dict[str, str]]) -> Any:
    for step in steps:
        action = tap(observe(), **step)
        if action is None:
            return False
        yield action
    return True


class PlaylistFromAlbum(WorldTemplate):
    name = "playlist_from_album"
    apps = ("music",)
    tier = "medium"
    chain = 1
    lookups = ("music.search", "music.list_playlists")
    goal_template = "Add the {artist} song from the album {album} to my '{playlist}' playlist."

    def build(self, w: World) -> dict[str, Any]:
        artist, other = w.draw(ARTISTS, 2)
        album = w.draw(ALBUMS3)
        target = _track(w, w.draw(SONGS), artist, album)
        _track(w, w.draw(SONGS), other, album)
        _track(w, w.draw(SONGS), artist, f"{album} (Live)")
        name = w.draw(TOPICS3).title()
        pl = w.playlist(name, [])
        w.playlist(f"{name} 2", [])
        return {"artist": artist, "album": album, "playlist": name, "_pl": pl["id"], "_track": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("music", "playlists", p["_pl"], {"track_ids": [p["_track"]]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        tracks = yield from lookup(observe, call("music.search", query=p["album"]))
        track = one(tracks, artist=p["artist"], album=p["album"])
        lists = yield from lookup(observe, call("music.list_playlists"))
        playlist = one(lists, name=p["playlist"])
        if track and playlist:
            yield call("music.add_to_playlist", playlist_id=playlist["id"], track_id=track["id"])


class ArtistPlaylist(WorldTemplate):
    name = "artist_playlist"
    apps = ("music",)
    tier = "hard"
    chain = 1
    lookups = ("music.search",)
    goal_template = "Make a playlist called '{playlist}' with every {artist} song in my library."

    def build(self, w: World) -> dict[str, Any]:
        artist, other = w.draw(ARTISTS, 2)
        album = w.draw(ALBUMS3)
        mine = [_track(w, song, artist, album)["id"] for song in w.draw(SONGS, w.rng.randint(2, 3))]
        _track(w, w.draw(SONGS), other, album)
        return {"artist": artist, "playlist": w.draw(TOPICS3).title(), "_tracks": mine}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("music", "playlists", {"name": p["playlist"], "track_ids": p["_tracks"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        tracks = yield from lookup(observe, call("music.search", query=p["artist"]))
        mine = find_rows(tracks, artist=p["artist"])
        if not mine:
            return
        created = yield from lookup(observe, call("music.create_playlist", name=p["playlist"]))
        if created:
            for track in mine:
                yield call("music.add_to_playlist", playlist_id=created["id"], track_id=track["id"])


class DropSongFromPlaylist(WorldTemplate):
    name = "drop_song_from_playlist"
    apps = ("music",)
    tier = "medium"
    chain = 1
    test_only = True
    lookups = ("music.list_playlists",)
    goal_template = "Take {song} off my '{playlist}' playlist."

    def build(self, w: World) -> dict[str, Any]:
        song, other = w.draw(SONGS, 2)
        a, b = w.draw(ARTISTS, 2)
        target = _track(w, song, a, w.draw(ALBUMS3))
        cover = _track(w, song, b, w.draw(ALBUMS3))
        keep = _track(w, other, a, w.draw(ALBUMS3))
        name = w.draw(TOPICS3).title()
        pl = w.playlist(name, [keep["id"], target["id"]])
        w.playlist("Road trip", [cover["id"], target["id"]])
        return {"song": song, "playlist": name, "_pl": pl["id"], "_keep": [keep["id"]]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("music", "playlists", p["_pl"], {"track_ids": p["_keep"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        lists = yield from lookup(observe, call("music.list_playlists"))
        playlist = one(lists, name=p["playlist"])
        if not playlist:
            return
        tracks = yield from lookup(observe, call("music.search", query=p["song"]))
        hits = [t for t in find_rows(tracks, title=p["song"]) if t["id"] in playlist["track_ids"]]
        if len(hits) == 1:
            yield call("music.remove_from_playlist", playlist_id=playlist["id"], track_id=hits[0]["id"])


# ---- recipes -----------------------------------------------------------------------------------

def _recipe(w: World, title: str, cuisine: str, minutes: int, ingredients: list[str]) -> dict[str, Any]:
    return w.recipe(title, cuisine, minutes, ingredients)


class RateRecipeGui(WorldTemplate):
    name = "rate_recipe_gui"
    apps = ("recipes",)
    tier = "medium"
    chain = 1
    gui = True
    goal_template = "Give my {dish} recipe {stars} stars."

    def build(self, w: World) -> dict[str, Any]:
        dish, other = w.draw(DISHES, 2)
        target = _recipe(w, dish, w.draw(CUISINES), 40, [w.draw(INGREDIENTS)])
        _recipe(w, f"Quick {dish.lower()}", w.draw(CUISINES), 20, [w.draw(INGREDIENTS)])
        _recipe(w, other, w.draw(CUISINES), 30, [w.draw(INGREDIENTS)])
        return {"dish": dish, "stars": w.rng.randint(1, 5), "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("recipes", "recipes", p["_id"], {"rating": p["stars"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        n = p["stars"]
        yield from gui_steps(observe, "Recipes", [{"text": p["dish"]}, {"rid": f"/rate_{n}"}])


class FavoriteQuickest(WorldTemplate):
    name = "favorite_quickest"
    apps = ("recipes",)
    tier = "easy"
    chain = 1
    lookups = ("recipes.search",)
    goal_template = "Mark my quickest {cuisine} recipe as a favourite."

    def build(self, w: World) -> dict[str, Any]:
        cuisine, other = w.draw(CUISINES, 2)
        times = w.rng.sample([m for m in range(15, 90, 5) if m != 30], 4)
        rows = [_recipe(w, dish, cuisine, t, [w.draw(INGREDIENTS)]) for dish, t in zip(w.draw(DISHES, 3), times,
                                                                                        strict=False)]
        _recipe(w, w.draw(DISHES) + " bowl", other, min(times) - 5, [w.draw(INGREDIENTS)])
        best = min(rows, key=lambda r: r["minutes"])
        return {"cuisine": cuisine, "_id": best["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        best = min((r for r in before.rows("recipes", "recipes") if r["cuisine"] == p["cuisine"]),
                   key=lambda r: r["minutes"])
        return [Update("recipes", "recipes", best["id"], {"favorite": True})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("recipes.search", query=p["cuisine"]))
        mine = find_rows(rows, cuisine=p["cuisine"])
        if mine:
            best = min(mine, key=lambda r: r["minutes"])
            yield call("recipes.set_favorite", id=best["id"], favorite=True)


class RecipeToCart(WorldTemplate):
    name = "recipe_to_cart"
    apps = ("recipes", "shopping")
    tier = "hard"
    chain = 2
    lookups = ("recipes.search", "shopping.search")
    goal_template = "Put one of each ingredient of my {dish} recipe in the cart, the cheapest in-stock offer of each."

    def build(self, w: World) -> dict[str, Any]:
        dish = w.draw(DISHES)
        ingredients = w.draw(INGREDIENTS, 2)
        _recipe(w, dish, w.draw(CUISINES), 45, ingredients)
        picks = []
        for ing in ingredients:
            picks.append(w.grocery_offers(ing, "value pack", "organic", 20)["id"])
        return {"dish": dish, "_ids": picks}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "cart", {"product_id": pid, "quantity": 1}) for pid in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("recipes.search", query=p["dish"]))
        recipe = one(rows, title=p["dish"])
        if not recipe:
            return
        yield from cart_cheapest(observe, recipe["ingredients"], 1)


# ---- weather and reminders -----------------------------------------------------------------------

def _city(w: World, name: str, saved: bool, rainy_on: str | None = None, highs: dict[str, int] | None = None,
          ) -> dict[str, Any]:
    """A city whose forecast rains on `rainy_on` only (or on random days when it is None)."""
    return w.city_forecast(name, range(-1, 12),
                           lambda date: date == rainy_on or (rainy_on is None and w.rng.random() < 0.3),
                           highs, saved=saved)


class UmbrellaReminder(WorldTemplate):
    name = "umbrella_reminder"
    apps = ("weather", "reminders")
    tier = "easy"
    chain = 1
    lookups = ("weather.forecast",)
    goal_template = ("If it will rain in {city} tomorrow, remind me tomorrow at {time} to take an umbrella; "
                     "otherwise remind me then to take sunglasses.")

    def build(self, w: World) -> dict[str, Any]:
        city, other = w.draw(CITIES, 2)
        rainy = w.rng.random() < 0.5
        tomorrow = w.day(1)
        _city(w, city, False, rainy_on=tomorrow if rainy else w.day(3))
        _city(w, other, True, rainy_on=tomorrow if not rainy else w.day(2))
        time = w.draw(TIMES3)
        return {"city": city, "time": time, "_word": "umbrella" if rainy else "sunglasses",
                "_due": f"{tomorrow}T{time}"}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        # The branch the forecast implies, and not the other one ("umbrella or sunglasses" fails).
        other = "sunglasses" if p["_word"] == "umbrella" else "umbrella"
        return [Add("reminders", "reminders", {"title": mentions(p["_word"], other), "due": p["_due"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        tomorrow = day_of(observe, 1)
        days = yield from lookup(observe, call("weather.forecast", city=p["city"], date=tomorrow))
        if days:
            word = "umbrella" if days[0]["rain_pct"] >= 50 else "sunglasses"
            yield call("reminders.create", title=f"Take {word}", due=f"{tomorrow}T{p['time']}")


class UmbrellaForVisit(UmbrellaReminder):
    name = "umbrella_for_visit"
    apps = ("contacts", "weather", "reminders")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "weather.forecast")
    goal_template = ("I'm visiting my {relation} tomorrow. If it will rain where they live, remind me tomorrow "
                     "at {time} to pack an umbrella; otherwise to pack sunglasses.")

    def build(self, w: World) -> dict[str, Any]:
        relation, time = w.nth(RELATIONS, TIMES3)
        target, everyone = w.people(relation)
        city, other = w.draw(CITIES, 2)
        target["city"], everyone[1]["city"] = city, other
        rainy = w.rng.random() < 0.5
        tomorrow = w.day(1)
        _city(w, city, False, rainy_on=tomorrow if rainy else w.day(3))
        _city(w, other, True, rainy_on=tomorrow if not rainy else w.day(2))
        return {"relation": relation, "time": time, "_word": "umbrella" if rainy else "sunglasses",
                "_due": f"{tomorrow}T{time}", "_city": city}

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        tomorrow = day_of(observe, 1)
        days = yield from lookup(observe, call("weather.forecast", city=person["city"], date=tomorrow))
        if days:
            word = "umbrella" if days[0]["rain_pct"] >= 50 else "sunglasses"
            yield call("reminders.create", title=f"Pack {word}", due=f"{tomorrow}T{p['time']}")


class WarmestSavedCity(WorldTemplate):
    name = "warmest_saved_city"
    apps = ("weather",)
    tier = "hard"
    chain = 2
    checker = "state_and_answer"
    lookups = ("weather.list_saved", "weather.forecast")
    goal_template = "Which of my saved cities will be warmest on {weekday}?"

    def build(self, w: World) -> dict[str, Any]:
        date = w.some_weekday()
        names = w.draw(CITIES, 4)
        highs = w.rng.sample(range(14, 31), 4)
        for name, high, saved in zip(names, highs, (True, True, True, False), strict=True):
            _city(w, name, saved, highs={date: high})
        return {"weekday": weekday_name(date), "_date": date, "_cities": names}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        best = max((d["high"], c["name"]) for c in before.rows("weather", "cities") if c["saved"]
                    for d in c["days"] if d["date"] == p["_date"])
        return [AnswerIs(best[1])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        date = weekday_date(observe, p["weekday"])
        saved = yield from lookup(observe, call("weather.list_saved"))
        highs = []
        for city in find_rows(saved):
            days = yield from lookup(observe, call("weather.forecast", city=city["name"], date=date))
            if days:
                highs.append((days[0]["high"], city["name"]))
        if highs:
            yield finish(max(highs)[1])


def _next_flight(observe: Any) -> Any:
    """The flight of the first flight booking from today on (None when there is none)."""
    today = day_of(observe)
    rows = yield from lookup(observe, call("travel.list_bookings"))
    booking = earliest_from(rows, "check_in", today, kind="flight")
    if not booking:
        return None
    return (yield from lookup(observe, call("travel.get_flight", id=booking["ref_id"])))


class SaveFlightCity(WorldTemplate):
    name = "save_flight_city"
    apps = ("travel", "weather")
    tier = "hard"
    chain = 2
    lookups = ("travel.list_bookings", "travel.get_flight")
    goal_template = "Add the city of my next flight to my weather list."

    def build(self, w: World) -> dict[str, Any]:
        city, later, old = w.draw(CITIES, 3)
        for dest, day in ((old, -10), (city, 3), (later, 12)):
            w.flight_booking(w.flight("Home Town", dest, w.day(day), "09:00", "11:00", 100.0, "Skylark"))
        target = _city(w, city, False)
        _city(w, later, False)
        return {"_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("weather", "cities", p["_id"], {"saved": True})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        flight = yield from _next_flight(observe)
        if flight:
            yield call("weather.save_city", city=flight["destination"])


def _reminder(w: World, title: str, due: str | None, done: bool = False, lst: str = "Reminders") -> dict[str, Any]:
    return w.add("reminders", "reminders", "rm", title=title, due=due, list=lst, done=done)


class TickOffReminder(WorldTemplate):
    name = "tick_off_reminder"
    apps = ("reminders",)
    tier = "medium"
    chain = 1
    lookups = ("reminders.search",)
    goal_template = "Tick off my reminder to {task} and delete the old one I finished before."

    def build(self, w: World) -> dict[str, Any]:
        task, other = w.draw(TASKS, 2)
        old = _reminder(w, task.capitalize(), f"{w.day(-30)}T09:00", done=True)
        target = _reminder(w, task.capitalize(), f"{w.day(1)}T09:00")
        _reminder(w, other.capitalize(), f"{w.day(1)}T10:00")
        _reminder(w, other.capitalize(), f"{w.day(-20)}T10:00", done=True)
        return {"task": task, "_id": target["id"], "_old": old["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("reminders", "reminders", p["_id"], {"done": True}),
                Remove("reminders", "reminders", p["_old"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("reminders.search", query=p["task"]))
        hit, old = one(rows, done=False), one(rows, done=True)
        if hit and old:
            yield call("reminders.complete", id=hit["id"])
            yield call("reminders.delete", id=old["id"])


class PostponeReminder(WorldTemplate):
    name = "postpone_reminder"
    apps = ("reminders",)
    tier = "easy"
    chain = 1
    lookups = ("reminders.search",)
    goal_template = "Move my reminder to {task} to the next day, same time."

    def build(self, w: World) -> dict[str, Any]:
        task = w.draw(TASKS)
        due = f"{w.day(w.rng.randint(0, 5))}T{w.rng.randint(8, 20):02d}:30"
        target = _reminder(w, task.capitalize(), due)
        _reminder(w, f"{task.capitalize()} (old)", f"{w.day(-7)}T08:00", done=True)
        return {"task": task, "_id": target["id"], "_due": shift(due, 24 * 60)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("reminders", "reminders", p["_id"], {"due": p["_due"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("reminders.search", query=p["task"]))
        hit = one(rows, done=False)
        if hit and hit["due"]:
            yield call("reminders.update", id=hit["id"], due=shift(hit["due"], 24 * 60))


class OverdueCount(WorldTemplate):
    name = "overdue_count"
    apps = ("reminders",)
    tier = "easy"
    chain = 1
    checker = "state_and_answer"
    test_only = True
    lookups = ("reminders.list",)
    goal_template = "How many of my open reminders are overdue?"

    def build(self, w: World) -> dict[str, Any]:
        # The answer is drawn first, uniformly over 0-4, so no count is right more often than
        # one instance in five (independent draws made "1" right 46% of the time).
        overdue = w.rng.randint(0, 4)
        dues = []
        for i, task in enumerate(w.draw(TASKS, 4)):
            late = i < overdue or w.rng.random() < 0.5  # the rest: in the future, or late but done
            day = w.rng.randint(-6, -1) if late else w.rng.randint(1, 6)
            row = _reminder(w, task.capitalize(), f"{w.day(day)}T{w.rng.randint(0, 23):02d}:00",
                            done=i >= overdue and late)
            dues.append([task, row["due"], row["done"]])
        return {"_now": w.now.strftime("%Y-%m-%dT%H:%M"), "_reminders": dues}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        n = sum(1 for r in before.rows("reminders", "reminders")
                if not r["done"] and r["due"] and r["due"] < p["_now"])
        return [AnswerIs(n)]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        now = minute_of(observe)
        rows = yield from lookup(observe, call("reminders.list", done=False))
        if rows is not None:
            yield finish(str(sum(1 for r in rows if r["due"] and r["due"] < now)))


# ---- clock, notes, settings, files, maps ---------------------------------------------------------

def _alarms(w: World, labels: list[str]) -> list[dict[str, Any]]:
    return [w.add("clock", "alarms", "al", time=f"{w.rng.randint(5, 10):02d}:{w.pick(['00', '15', '30', '45'])}",
                  label=label, enabled=True, days=w.pick([["mon", "tue", "wed", "thu", "fri"], [], ["sat"]]))
            for label in labels]


class AlarmOff(WorldTemplate):
    name = "alarm_off"
    apps = ("clock",)
    tier = "medium"
    chain = 1
    lookups = ("clock.list_alarms",)
    goal_template = "Turn off my {label} alarm and set a one-off alarm {duration} after its time instead."

    def build(self, w: World) -> dict[str, Any]:
        labels = w.draw(LABELS3, 2)
        target, _ = _alarms(w, labels)
        duration = w.pick(list(_SHORT))
        return {"label": target["label"], "duration": duration, "_id": target["id"],
                "_time": shift(target["time"], DURATIONS[duration])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("clock", "alarms", p["_id"], {"enabled": False}),
                Add("clock", "alarms", {"time": p["_time"], "enabled": True, "days": []})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("clock.list_alarms"))
        hit = one(rows, label=p["label"])
        if hit:
            yield call("clock.toggle_alarm", id=hit["id"], enabled=False)
            yield call("clock.set_alarm", time=shift(hit["time"], DURATIONS[p["duration"]]), label=p["label"])


class AlarmEarlier(WorldTemplate):
    name = "alarm_earlier"
    apps = ("clock",)
    tier = "easy"
    chain = 1
    test_only = True
    lookups = ("clock.list_alarms",)
    goal_template = "Make my {label} alarm go off {duration} earlier."

    def build(self, w: World) -> dict[str, Any]:
        target, _ = _alarms(w, w.draw(LABELS3, 2))
        duration = w.pick(list(_SHORT))
        return {"label": target["label"], "duration": duration, "_id": target["id"],
                "_time": shift(target["time"], -DURATIONS[duration])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("clock", "alarms", p["_id"], {"time": p["_time"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("clock.list_alarms"))
        hit = one(rows, label=p["label"])
        if hit:
            yield call("clock.update_alarm", id=hit["id"], time=shift(hit["time"], -DURATIONS[p["duration"]]))


class TimerFor(WorldTemplate):
    name = "timer_for"
    apps = ("clock",)
    tier = "easy"
    needs_lookup = False
    goal_template = "Start a timer for {duration} for the {thing}."

    def build(self, w: World) -> dict[str, Any]:
        duration, thing = w.nth(list(DURATIONS), DISHES)
        return {"duration": duration, "thing": thing.lower()}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("clock", "timers", {"seconds": DURATIONS[p["duration"]] * 60})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        yield call("clock.start_timer", seconds=DURATIONS[p["duration"]] * 60, label=p["thing"])


class NotePhoneOfRelation(WorldTemplate):
    name = "note_phone_of_relation"
    apps = ("contacts", "notes")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search", "notes.search")
    goal_template = "Add my {relation}'s phone number to my '{topic}' note."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        topic = w.draw(TOPICS3).capitalize()
        note = w.note(topic, "Things to sort out.")
        w.note(f"{topic} (old)", "Done.")
        return {"relation": relation, "topic": topic, "_id": note["id"], "_phone": target["phone"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("notes", "notes", p["_id"], {"body": ("~", p["_phone"])})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        note = yield from note_titled(observe, p["topic"])
        if person and note:
            yield call("notes.update", id=note["id"], append=f" {person['phone']}")


class DimmerScreen(WorldTemplate):
    name = "dimmer_screen"
    apps = ("settings",)
    tier = "medium"
    chain = 1
    lookups = ("settings.get",)
    goal_template = "Make the screen {delta} points dimmer than it is now and switch to the dark theme."

    def build(self, w: World) -> dict[str, Any]:
        delta, level = w.nth(DELTAS, range(50, 100, 4))
        w.settings["brightness"] = level
        return {"delta": delta, "_level": level - delta}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Setting("brightness", p["_level"]), Setting("dark_mode", True)]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        value = yield from lookup(observe, call("settings.get", key="brightness"))
        if isinstance(value, dict) and "value" in value:
            yield call("settings.set", key="brightness", value=value["value"] - p["delta"])
            yield call("settings.set", key="dark_mode", value=True)


class MoveTaggedPhotos(WorldTemplate):
    name = "move_tagged_photos"
    apps = ("files",)
    tier = "medium"
    chain = 1
    test_only = True
    lookups = ("files.search",)
    goal_template = "Move every photo tagged '{tag}' into the {album} album."

    def build(self, w: World) -> dict[str, Any]:
        tag, other = w.draw(TAGS3, 2)
        album = w.draw(ALBUMS3)
        ids = []
        for i in range(w.rng.randint(2, 3) + 2):
            tags = [tag] if i >= 2 else [other]
            name = f"IMG_{w.rng.randint(2000, 9999)}.jpg"
            row = w.photo(name, "Camera", tags, 1200, f"{w.day(-i)}T10:00")
            if tag in tags:
                ids.append(row["id"])
        return {"tag": tag, "album": album, "_ids": ids}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("files", "files", i, {"album": p["album"]}, free=("path",)) for i in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("files.search", query=p["tag"], kind="photo"))
        for row in tagged(rows, p["tag"]):
            yield call("files.move", id=row["id"], album=p["album"])


class SaveBestRated(WorldTemplate):
    name = "save_best_rated"
    apps = ("maps",)
    tier = "medium"
    chain = 1
    lookups = ("maps.search_places",)
    goal_template = "Save the best-rated {category} around here to my '{listname}' list and start driving there."

    def build(self, w: World) -> dict[str, Any]:
        category = w.pick(["bakery", "bookshop", "climbing gym", "florist", "vet"])
        names = w.draw(PLACES3, 3)
        ratings = [5.0, 4.7, 4.3]
        w.rng.shuffle(ratings)
        rows = [w.place(n, f"{w.rng.randint(1, 99)} Quay", r, category=category)
                for n, r in zip(names, ratings, strict=True)]
        best = max(rows, key=lambda r: r["rating"])
        return {"category": category, "listname": w.draw(TOPICS3).title(), "_id": best["id"],
                "_name": best["name"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("maps", "saved", {"place_id": p["_id"], "list": p["listname"]}),
                Add("maps", "trips", {"destination": p["_name"], "mode": "drive"})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("maps.search_places", query=p["category"]))
        mine = find_rows(rows, category=p["category"])
        if mine:
            best = max(mine, key=lambda r: r["rating"])
            yield call("maps.save_place", place_id=best["id"], list=p["listname"])
            yield call("maps.navigate", destination=best["name"], mode="drive")


class TravelTimeTo(WorldTemplate):
    name = "travel_time_to"
    apps = ("maps", "calendar")
    tier = "hard"
    chain = 2
    checker = "state_and_answer"
    test_only = True
    lookups = ("calendar.search", "maps.eta")
    goal_template = "How many minutes will it take me to get from home to my {title} {how}?"

    def build(self, w: World) -> dict[str, Any]:
        title, place, how = w.nth(TITLES3, PLACES3, tuple(_MODES))
        other = w.other(PLACES3, place)
        w.event(title, f"{w.day(2)}T10:00", f"{w.day(2)}T11:00", location=place)
        w.event(f"{title} follow-up", f"{w.day(9)}T10:00", f"{w.day(9)}T11:00", location=other)
        from devices.sim.apps.maps import eta_minutes

        return {"title": title, "how": how, "_eta": eta_minutes("Home", place, _MODES[how])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_eta"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("calendar.search", query=p["title"]))
        event = one(rows, title=p["title"])
        if event:
            value = yield from lookup(observe, call("maps.eta", origin="Home", destination=event["location"],
                                                    mode=_MODES[p["how"]]))
            if value:
                yield finish(str(value["eta_min"]))


class ForecastForTrip(WorldTemplate):
    name = "forecast_for_trip"
    apps = ("travel", "weather")
    tier = "hard"
    chain = 3
    checker = "state_and_answer"
    lookups = ("travel.list_bookings", "travel.get_flight", "weather.forecast")
    goal_template = "What's the forecast high, in °C, for the day I land on my next trip?"

    def build(self, w: World) -> dict[str, Any]:
        city, day = w.nth(CITIES, range(2, 11))
        old = w.other(CITIES, city)
        for dest, d in ((old, -5), (city, day)):
            w.flight_booking(w.flight("Home Town", dest, w.day(d), "09:00", "11:00", 100.0, "Nordair"))
        row = _city(w, city, False)
        _city(w, old, True)
        high = next(d["high"] for d in row["days"] if d["date"] == w.day(day))
        return {"_high": high, "_city": city, "_day": day}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_high"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        flight = yield from _next_flight(observe)
        if flight:
            days = yield from lookup(observe, call("weather.forecast", city=flight["destination"],
                                                   date=flight["date"]))
            if days:
                yield finish(str(days[0]["high"]))


class ForecastWhereRelationLives(WorldTemplate):
    name = "forecast_where_relation_lives"
    apps = ("contacts", "weather")
    tier = "easy"
    chain = 1
    checker = "tool_call"
    lookups = ("contacts.search",)
    goal_template = "Show me {weekday}'s forecast for the city my {relation} lives in."

    def build(self, w: World) -> dict[str, Any]:
        relation, city = w.nth(RELATIONS, CITIES)
        target, everyone = w.people(relation)
        other = w.other(CITIES, city)
        target["city"], everyone[1]["city"] = city, other
        _city(w, city, False)
        _city(w, other, True)
        date = w.some_weekday()
        return {"relation": relation, "weekday": weekday_name(date), "_city": city, "_date": date}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Called("weather.forecast", {"city": p["_city"], "date": p["_date"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            date = weekday_date(observe, p["weekday"])
            yield call("weather.forecast", city=person["city"], date=date)


TEMPLATES = [ForecastWhereRelationLives, LogActivity, DuplicateActivity, MedicationLater, StopMedication, WeightLost, SleepAverage,
             LikeSongGui, PlaylistFromAlbum, ArtistPlaylist, DropSongFromPlaylist, RateRecipeGui,
             FavoriteQuickest, RecipeToCart, UmbrellaReminder, UmbrellaForVisit, WarmestSavedCity, SaveFlightCity,
             TickOffReminder, PostponeReminder, OverdueCount, AlarmOff, AlarmEarlier, TimerFor,
             NotePhoneOfRelation, DimmerScreen, MoveTaggedPhotos, SaveBestRated, TravelTimeTo,
             ForecastForTrip]
