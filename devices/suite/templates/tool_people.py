"""Tool templates about people: contacts, messages, email and the calendar.

Goals name people by their relation to the user ("my sister"), events by when they happen,
emails by their topic; the oracle finds names, ids and times with lookups first.
"""

from __future__ import annotations

import re
from typing import Any

from devices.suite.diff import Add, AnswerIs, Remove, Update, mentions
from devices.suite.templates._vocab import PHRASES3, PLACES3, TAGS3, TITLES3, TOPICS3
from devices.suite.templates._world import (
    DURATIONS,
    EMAIL_READ,
    RELATIONS,
    TEXT_READ,
    World,
    WorldTemplate,
    call,
    day_of,
    event_titled_on,
    events_on,
    find_rows,
    finish,
    latest,
    lookup,
    next_event_with,
    note_titled,
    one,
    person_by_relation,
    shift,
    tagged,
    weekday_name,
)

__all__ = ["TEMPLATES"]

def _event(w: World, title: str, date: str, hour: int, minutes: int = 60, **extra: Any) -> dict[str, Any]:
    start = f"{date}T{hour:02d}:{w.pick(['00', '15', '30', '45'])}"
    return w.event(title, start, shift(start, minutes), **extra)


class TextRelation(WorldTemplate):
    name = "text_relation"
    apps = ("contacts", "messages", "maps")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search", "maps.search_places")
    goal_template = "Text my {relation} the address of {place}."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        place, other = w.draw(PLACES3, 2)
        row = w.place(place, f"{w.rng.randint(2, 300)} Canal St", 4.1)
        decoy = w.place(other, f"{w.rng.randint(2, 300)} Canal St", 4.4)
        return {"relation": relation, "place": place, "_phone": target["phone"], "_address": row["address"],
                "_other_address": decoy["address"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        # The place's address and not the other one's: a text listing every address fails.
        return [Add("messages", "messages", {"phone": p["_phone"], "direction": "out",
                                             "body": mentions(p["_address"], p.get("_other_address"))})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        places = yield from lookup(observe, call("maps.search_places", query=p["place"]))
        place = one(places, name=p["place"])
        if person and place:
            yield call("messages.send", contact=person["name"], body=f"{p['place']}: {place['address']}")


class StarRelation(WorldTemplate):
    name = "star_relation"
    apps = ("contacts",)
    tier = "hard"
    chain = 1
    lookups = ("contacts.search", "contacts.list")
    goal_template = "Make my {relation} my only starred contact."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related(4)
        for person in everyone[1:3]:
            person["starred"] = True
        return {"relation": relation, "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        starred = [r["id"] for r in before.rows("contacts", "contacts") if r["starred"]]
        return [Update("contacts", "contacts", p["_id"], {"starred": True}),
                *(Update("contacts", "contacts", i, {"starred": False}) for i in starred)]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        starred = yield from lookup(observe, call("contacts.list", starred=True))
        if person and starred is not None:
            yield call("contacts.star", id=person["id"], starred=True)
            for other in find_rows(starred):
                yield call("contacts.star", id=other["id"], starred=False)


class NewNumberRelation(WorldTemplate):
    name = "new_number_relation"
    apps = ("contacts", "messages")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search",)
    goal_template = ("My {relation} has a new number, {new_phone}. Update my contacts, then text them "
                     "\"{phrase}\" on it.")

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        return {"relation": relation, "new_phone": w.phone(), "phrase": w.draw(PHRASES3), "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("contacts", "contacts", p["_id"], {"phone": p["new_phone"]}),
                Add("messages", "messages", {"phone": p["new_phone"], "direction": "out", "body": p["phrase"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            yield call("contacts.update", id=person["id"], phone=p["new_phone"])
            yield call("messages.send", contact=person["name"], body=p["phrase"])


class ForgetRelation(WorldTemplate):
    name = "forget_relation"
    apps = ("contacts",)
    tier = "easy"
    chain = 1
    test_only = True
    lookups = ("contacts.search",)
    goal_template = "I changed {relation}s; remove the old {relation} from my contacts."

    def build(self, w: World) -> dict[str, Any]:
        relation = w.pick(["dentist", "plumber", "accountant", "babysitter", "coach", "landlord"])
        target, _ = w.people(relation)
        return {"relation": relation, "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("contacts", "contacts", p["_id"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            yield call("contacts.delete", id=person["id"])


class EmailRelation(WorldTemplate):
    name = "email_relation"
    apps = ("contacts", "email", "notes")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search", "notes.search")
    goal_template = ("Email my {relation} what my '{topic}' note says, with the note's title as the "
                     "subject.")

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        topic = w.draw(TOPICS3).capitalize()
        body = f"{w.draw(PHRASES3)}; {w.draw(PHRASES3)}"
        w.note(topic, body)
        w.note(f"{topic} draft", w.draw(PHRASES3))
        return {"relation": relation, "topic": topic, "_email": target["email"], "_body": body}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("email", "emails", {"folder": "sent", "to": [p["_email"]], "subject": p["topic"],
                                        "body": p["_body"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        note = yield from note_titled(observe, p["topic"])
        if person and note:
            yield call("email.send", to=[person["email"]], subject=note["title"], body=note["body"])


def _inbox(w: World, sender: str, subject: str, body: str, day: int) -> dict[str, Any]:
    return w.email(sender, subject, body, f"{w.day(day)}T09:{w.rng.randrange(60):02d}")


class ReplyAboutTopic(WorldTemplate):
    name = "reply_about_topic"
    apps = ("email",)
    tier = "medium"
    chain = 1
    lookups = ("email.search",)
    goal_template = "Reply to whoever emailed me about the {topic}: \"{phrase}\", and star their email."

    def build(self, w: World) -> dict[str, Any]:
        topic, other = w.draw(TOPICS3, 2)
        a, b = w.contact(), w.contact()
        target = _inbox(w, a["email"], f"About the {topic}", f"Can we go over the {topic}?", -1)
        _inbox(w, b["email"], f"About the {other}", f"Notes on the {other}.", -2)
        w.email("me@example.com", f"The {topic}", f"Sent you the {topic}.", f"{w.day(-3)}T10:00", folder="sent",
                to=[b["email"]], read=True)
        return {"topic": topic, "phrase": w.draw(PHRASES3), "_to": target["sender"], "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("email", "emails", {"folder": "sent", "to": [p["_to"]], "body": p["phrase"]}),
                Update("email", "emails", p["_id"], {"starred": True}, free=("read",))]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("email.search", query=p["topic"], folder="inbox"))
        mail = one(rows)
        if mail:
            yield call("email.reply", id=mail["id"], body=p["phrase"])
            yield call("email.star", id=mail["id"], starred=True)


class SaveSenderContact(WorldTemplate):
    name = "save_sender_contact"
    apps = ("email", "contacts", "messages")
    tier = "medium"
    chain = 1
    lookups = ("email.search",)
    goal_template = ("Save whoever emailed me about the {topic} as a contact (their name and number "
                     "are in the signature), then text them \"{phrase}\".")

    def build(self, w: World) -> dict[str, Any]:
        topic, other = w.draw(TOPICS3, 2)
        name, decoy = w.person_name(), w.person_name()
        phone = w.phone()
        first = name.split()[0].lower()
        _inbox(w, f"{first}@work.example", f"Question about the {topic}",
               f"Could you check the {topic}?\n-- {name} · {phone}", -1)
        _inbox(w, f"{decoy.split()[0].lower()}@work.example", f"Re: {other}",
               f"Done with the {other}.\n-- {decoy} · {w.phone()}", -2)
        return {"topic": topic, "phrase": w.draw(PHRASES3), "_name": name, "_phone": phone}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("contacts", "contacts", {"name": p["_name"], "phone": p["_phone"]}), EMAIL_READ,
                Add("messages", "messages", {"phone": p["_phone"], "direction": "out", "body": p["phrase"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("email.search", query=p["topic"], folder="inbox"))
        mail = one(rows)
        found = re.search(r"-- (.+?) · (\+[\d-]+)", mail["body"]) if mail else None
        if found:
            yield call("contacts.add", name=found.group(1), phone=found.group(2), email=mail["sender"])
            yield call("messages.send", contact=found.group(1), body=p["phrase"])


class ReplyLastText(WorldTemplate):
    name = "reply_last_text"
    apps = ("messages",)
    tier = "easy"
    chain = 1
    lookups = ("messages.search",)
    goal_template = "Reply \"{phrase}\" to the last person who texted me about the {topic}."

    def build(self, w: World) -> dict[str, Any]:
        topic = w.draw(TOPICS3)
        a, b, c = w.contact(), w.contact(), w.contact()
        for person, day, direction in ((a, -1, "in"), (b, -4, "in"), (c, 0, "out")):
            w.text(person, f"What about the {topic}?", f"{w.day(day)}T07:{w.rng.randrange(60):02d}",
                   read=direction == "out", direction=direction)
        return {"topic": topic, "phrase": w.draw(PHRASES3), "_phone": a["phone"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": p["_phone"], "direction": "out", "body": p["phrase"]}),
                TEXT_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("messages.search", query=p["topic"]))
        last = latest(rows, "sent_at", direction="in")
        if last:
            yield call("messages.send", phone=last["phone"], body=p["phrase"])


class UnreadFromRelation(WorldTemplate):
    name = "unread_from_relation"
    apps = ("contacts", "messages")
    tier = "hard"
    chain = 2
    checker = "state_and_answer"
    lookups = ("contacts.search", "messages.list")
    goal_template = "How many unread texts do I have from my {relation}?"

    def build(self, w: World) -> dict[str, Any]:
        relation, n = w.nth(RELATIONS, (1, 2, 3, 4, 5, 6))  # no count right in more than 1 of 6
        target, everyone = w.people(relation)
        for i, person in enumerate([target] * (n + 2) + everyone[1:]):
            w.text(person, w.draw(PHRASES3), f"{w.day(-i % 5)}T0{i % 9}:1{i % 6}", read=person is target and i >= n)
        return {"relation": relation, "_count": n, "_name": target["name"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_count"]), TEXT_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            rows = yield from lookup(observe, call("messages.list", contact=person["name"], unread=True))
            if rows is not None:
                yield finish(str(len(rows)))


class NextMeetingPlace(WorldTemplate):
    name = "next_meeting_place"
    apps = ("contacts", "calendar")
    tier = "hard"
    chain = 2
    checker = "state_and_answer"
    lookups = ("contacts.search", "calendar.search")
    goal_template = "Where am I meeting my {relation} next?"

    def build(self, w: World) -> dict[str, Any]:
        relation, answer = w.nth(RELATIONS, PLACES3)
        target, everyone = w.people(relation)
        places = [w.other(PLACES3, answer), answer,
                  w.other(PLACES3, answer)]
        _event(w, w.draw(TITLES3), w.day(-2), 10, location=places[0], attendees=[target["name"]])
        nxt = _event(w, w.draw(TITLES3), w.day(2), 12, location=places[1], attendees=[target["name"]])
        _event(w, w.draw(TITLES3), w.day(9), 15, location=places[2], attendees=[target["name"]])
        _event(w, w.draw(TITLES3), w.day(1), 9, location=places[2], attendees=[everyone[1]["name"]])
        return {"relation": relation, "_place": nxt["location"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_place"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from next_event_with(observe, p["relation"])
        if event:
            yield finish(event["location"])


class CancelNextWithRelation(WorldTemplate):
    name = "cancel_next_with_relation"
    apps = ("contacts", "calendar")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "calendar.search")
    goal_template = "Cancel my next appointment with my {relation}."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related()
        title = w.draw(TITLES3)
        _event(w, title, w.day(-3), 11, attendees=[target["name"]])
        nxt = _event(w, title, w.day(3), 11, attendees=[target["name"]])
        _event(w, title, w.day(10), 11, attendees=[target["name"]])
        _event(w, title, w.day(1), 16, attendees=[everyone[1]["name"]])
        return {"relation": relation, "_id": nxt["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("calendar", "events", p["_id"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from next_event_with(observe, p["relation"])
        if event:
            yield call("calendar.delete_event", id=event["id"])


class InviteRelation(WorldTemplate):
    name = "invite_relation"
    apps = ("contacts", "calendar")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search", "calendar.list_events")
    goal_template = "Add my {relation} to the attendees of my {title} on {weekday}."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related()
        title = w.draw(TITLES3)
        date = w.some_weekday()
        mine = _event(w, title, date, 10, attendees=[everyone[2]["name"]])
        _event(w, title, w.day(1 if date > w.day(3) else 8), 10, attendees=[])
        return {"relation": relation, "title": title, "weekday": weekday_name(date), "_id": mine["id"],
                "_attendees": sorted([everyone[2]["name"], target["name"]])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("calendar", "events", p["_id"], {"attendees": p["_attendees"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        _, events = yield from events_on(observe, p["weekday"])
        event = one(events, title=p["title"])
        if person and event:
            yield call("calendar.update_event", id=event["id"],
                       attendees=[*event["attendees"], person["name"]])


class EventPlaceOnDay(WorldTemplate):
    name = "event_place_on_day"
    apps = ("calendar",)
    tier = "easy"
    chain = 1
    checker = "state_and_answer"
    lookups = ("calendar.search",)
    goal_template = "Where is my {title} on {weekday}?"

    def build(self, w: World) -> dict[str, Any]:
        title, a, k = w.nth(TITLES3, PLACES3, range(7))
        date = w.next_weekday(k)
        b, c = w.other(PLACES3, a, 2)
        target = _event(w, title, date, 14, location=a)
        _event(w, title, (w.now.replace(day=1)).strftime("%Y-%m-%d"), 14, location=b)
        _event(w, f"{title} prep", date, 9, location=c)
        return {"title": title, "weekday": weekday_name(date), "_place": target["location"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_place"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from event_titled_on(observe, p["title"], p["weekday"])
        if event:
            yield finish(event["location"])


class CountEventsOnDay(WorldTemplate):
    name = "count_events_on_day"
    apps = ("calendar",)
    tier = "easy"
    chain = 1
    checker = "state_and_answer"
    test_only = True
    lookups = ("calendar.list_events",)
    goal_template = "How many things are in my calendar {when}?"

    def build(self, w: World) -> dict[str, Any]:
        offset, count, first = w.nth((1, 2), (1, 2, 3, 4, 5, 6), TITLES3)  # no count right in more than 1 of 6
        date = w.day(offset)
        for i in range(count):
            _event(w, first if i == 0 else w.draw(TITLES3), date, 9 + 2 * i)
        for off in (0, 3):
            _event(w, w.draw(TITLES3), w.day(off), 13)
        return {"when": "tomorrow" if offset == 1 else "the day after tomorrow", "_date": date, "_count": count,
                "_first": first}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        n = sum(r["start"].startswith(p["_date"]) for r in before.rows("calendar", "events"))
        return [AnswerIs(n)]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        days = 1 if p["when"] == "tomorrow" else 2
        date = day_of(observe, days)
        rows = yield from lookup(observe, call("calendar.list_events", date=date))
        if rows is not None:
            yield finish(str(len(rows)))


class MoveEventLater(WorldTemplate):
    name = "move_event_later"
    apps = ("calendar", "messages")
    tier = "medium"
    chain = 1
    lookups = ("calendar.search",)
    goal_template = "Push my {title} on {weekday} back by {duration} and text the person I'm meeting \"{phrase}\"."

    def build(self, w: World) -> dict[str, Any]:
        title = w.draw(TITLES3)
        date = w.some_weekday()
        duration = w.pick(list(DURATIONS))
        who, other = w.contact(), w.contact()
        target = _event(w, title, date, 10, attendees=[who["name"]])
        _event(w, title, w.day(-1), 10, attendees=[other["name"]])
        return {"title": title, "weekday": weekday_name(date), "duration": duration, "phrase": w.draw(PHRASES3),
                "_phone": who["phone"], "_id": target["id"],
                "_start": shift(target["start"], DURATIONS[duration]),
                "_end": shift(target["end"], DURATIONS[duration])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("calendar", "events", p["_id"], {"start": p["_start"], "end": p["_end"]}),
                Add("messages", "messages", {"phone": p["_phone"], "direction": "out", "body": p["phrase"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from event_titled_on(observe, p["title"], p["weekday"])
        if event:
            minutes = DURATIONS[p["duration"]]
            yield call("calendar.update_event", id=event["id"], start=shift(event["start"], minutes),
                       end=shift(event["end"], minutes))
            for person in event["attendees"]:
                yield call("messages.send", contact=person, body=p["phrase"])


class SlotOnEventDay(WorldTemplate):
    name = "slot_on_event_day"
    apps = ("calendar", "contacts")
    tier = "hard"
    chain = 2
    lookups = ("calendar.search", "calendar.find_free_slot", "contacts.search")
    goal_template = ("On the day of my {title}, book the first free {duration} slot for \"{new_title}\" "
                     "with my {relation}.")

    def build(self, w: World) -> dict[str, Any]:
        title, new_title, busy = w.draw(TITLES3, 3)
        relation, target, _ = w.related()
        date = w.day(w.rng.randint(2, 9))
        _event(w, title, date, 8, minutes=w.pick([60, 90, 120]))
        _event(w, busy, date, 11)
        duration = w.pick(["half an hour", "an hour", "three quarters of an hour"])
        return {"title": title, "new_title": new_title, "duration": duration, "relation": relation,
                "_date": date, "_name": target["name"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        from datetime import datetime, timedelta

        day = p["_date"]
        need = timedelta(minutes=DURATIONS[p["duration"]])
        cursor = datetime.strptime(f"{day}T08:00", "%Y-%m-%dT%H:%M")
        busy = sorted((datetime.strptime(r["start"], "%Y-%m-%dT%H:%M"), datetime.strptime(r["end"], "%Y-%m-%dT%H:%M"))
                      for r in before.rows("calendar", "events") if r["start"].startswith(day))
        for start, end in busy:
            if start - cursor >= need:
                break
            cursor = max(cursor, end)
        fmt = "%Y-%m-%dT%H:%M"
        return [Add("calendar", "events", {"title": p["new_title"], "start": cursor.strftime(fmt),
                                           "end": (cursor + need).strftime(fmt), "attendees": [p["_name"]]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("calendar.search", query=p["title"]))
        event = one(rows, title=p["title"])
        person = yield from person_by_relation(observe, p["relation"])
        if event and person:
            slot = yield from lookup(observe, call("calendar.find_free_slot", date=event["start"][:10],
                                                   duration_min=DURATIONS[p["duration"]]))
            if slot:
                yield call("calendar.create_event", title=p["new_title"], start=slot["start"], end=slot["end"],
                           attendees=[person["name"]])


class SharePhotoRelation(WorldTemplate):
    name = "share_photo_relation"
    apps = ("contacts", "files")
    tier = "medium"
    chain = 1
    lookups = ("contacts.search", "files.search")
    goal_template = "Send my {relation} the photo I tagged '{tag}'."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        tag, other = w.draw(TAGS3, 2)
        names = [f"IMG_{w.rng.randint(2000, 9999)}.jpg" for _ in range(3)]
        for name, tags in zip(names, ([tag], [other], []), strict=True):
            w.photo(name, "Camera", tags, w.rng.randint(900, 4000), f"{w.day(-2)}T12:00")
        return {"relation": relation, "tag": tag, "_phone": target["phone"], "_file": names[0]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": p["_phone"], "body": f"[file] {p['_file']}"})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        rows = yield from lookup(observe, call("files.search", query=p["tag"], kind="photo"))
        photos = tagged(rows, p["tag"])
        if person and len(photos) == 1:
            yield call("files.share", id=photos[0]["id"], contact=person["name"])


class AlarmBeforeMeeting(WorldTemplate):
    name = "alarm_before_meeting"
    apps = ("contacts", "calendar", "clock")
    tier = "hard"
    chain = 2
    test_only = True
    lookups = ("contacts.search", "calendar.search")
    goal_template = "Set an alarm {duration} before my next appointment with my {relation}."

    def build(self, w: World) -> dict[str, Any]:
        relation, duration = w.nth(RELATIONS, ("half an hour", "an hour", "a quarter of an hour",
                                               "an hour and a half"))
        target, _ = w.people(relation)
        _event(w, w.draw(TITLES3), w.day(-1), 9, attendees=[target["name"]])
        nxt = _event(w, w.draw(TITLES3), w.day(1), w.rng.randint(9, 17), attendees=[target["name"]])
        _event(w, w.draw(TITLES3), w.day(5), 9, attendees=[target["name"]])
        return {"relation": relation, "duration": duration,
                "_time": shift(nxt["start"][11:], -DURATIONS[duration])}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("clock", "alarms", {"time": p["_time"], "enabled": True})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from next_event_with(observe, p["relation"])
        if event:
            yield call("clock.set_alarm", time=shift(event["start"][11:], -DURATIONS[p["duration"]]))


class DirectionsToMeeting(WorldTemplate):
    name = "directions_to_meeting"
    apps = ("contacts", "calendar", "maps")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "calendar.search")
    goal_template = "Start walking directions to my next meeting with my {relation}."

    def build(self, w: World) -> dict[str, Any]:
        relation, answer = w.nth(RELATIONS, PLACES3)
        target, _ = w.people(relation)
        places = [answer, w.other(PLACES3, answer)]
        for name in places:
            w.place(name, f"{w.rng.randint(1, 99)} High St", 4.2)
        _event(w, w.draw(TITLES3), w.day(-1), 9, location=places[1], attendees=[target["name"]])
        _event(w, w.draw(TITLES3), w.day(2), 11, location=places[0], attendees=[target["name"]])
        return {"relation": relation, "_place": places[0]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("maps", "trips", {"destination": p["_place"], "mode": "walk"})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        event = yield from next_event_with(observe, p["relation"])
        if event:
            yield call("maps.navigate", destination=event["location"], mode="walk")


TEMPLATES = [TextRelation, StarRelation, NewNumberRelation, ForgetRelation, EmailRelation, ReplyAboutTopic,
             SaveSenderContact, ReplyLastText, UnreadFromRelation, NextMeetingPlace, CancelNextWithRelation,
             InviteRelation, EventPlaceOnDay, CountEventsOnDay, MoveEventLater, SlotOnEventDay,
             SharePhotoRelation, AlarmBeforeMeeting, DirectionsToMeeting]
