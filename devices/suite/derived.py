"""Which templates' oracles act with values the agent does not see, and by which rule it gets them.

A template is listed with the rules (devices.suite.sufficiency.RULES) its oracle uses for values
that are not in the context at that step: `DATE` date arithmetic (today + 3 days, an hour
later), `SUM` arithmetic (a half, a sum, a count), `TEXT` text the agent composes itself (an
instruction, a note body, a memory key or query). A joined errand (`a__and__b`) needs what its
parts need; it is listed only for a rule its parts do not bring. A template that is not listed
needs nothing it cannot see. `tests/devices/suite/test_sufficiency.py` plays every template's
oracle on every split and fails when a value is neither visible nor covered here, so this table
is the reviewed declaration, not a measurement: a new need must be added on purpose.
"""

from __future__ import annotations

__all__ = ["DATE", "DERIVED", "SUM", "TEXT", "derived_rules"]

DATE = "date arithmetic"
SUM = "arithmetic"
TEXT = "composed text"

DERIVED: dict[str, tuple[str, ...]] = {
    "alarm_before_meeting": (DATE,),
    "alarm_earlier": (DATE,),
    "alarm_off": (DATE,),
    "bank_reference_gui": (DATE,),
    "birthday_gifts_shipped": (TEXT,),
    "cheapest_flight_to_relation": (DATE,),
    "conference_travel": (SUM, DATE, TEXT,),
    "count_events_on_day": (DATE,),
    "decline_emails_update_events": (TEXT,),
    "dimmer_screen": (SUM,),
    "duplicate_activity": (SUM, DATE,),
    "event_forecast_notes": (DATE, TEXT,),
    "family_forecast_texts": (DATE, TEXT,),
    "flight_events_with_forecast": (DATE, TEXT,),
    "flight_packing_reminders": (DATE, TEXT,),
    "forecast_where_relation_lives": (DATE,),
    "hotel_name_to_relation": (TEXT,),
    "hotel_stays_forecast_to_relation": (TEXT,),
    "invite_relation": (DATE,),
    "late_for_todays_meetings": (DATE, TEXT,),
    "log_activity": (SUM, DATE,),
    "medication_later": (DATE,),
    "meeting_addresses_to_attendees": (DATE, TEXT,),
    "meeting_requests_from_texts": (DATE, TEXT,),
    "meeting_venues_by_email": (DATE, TEXT,),
    "mem_cancel_gift_order": (TEXT,),
    "mem_email_relation": (TEXT,),
    "mem_follow_up_from_note": (TEXT, DATE,),
    "mem_forget_old_address": (TEXT,),
    "mem_home_checkout": (TEXT,),
    "mem_invite_relation": (TEXT,),
    "mem_latest_parking": (TEXT,),
    "mem_locker_code": (TEXT,),
    "mem_navigate_provider": (TEXT,),
    "mem_preferred_brightness": (TEXT,),
    "mem_preferred_timer": (SUM,),
    "mem_relation_event_address": (TEXT,),
    "mem_relation_phone": (TEXT,),
    "mem_reply_relation_email": (TEXT,),
    "mem_save_code_from_text": (TEXT,),
    "mem_share_photo_relation": (TEXT,),
    "mem_star_relation": (TEXT,),
    "mem_text_relation": (TEXT,),
    "mem_update_work_address": (TEXT,),
    "mem_usual_order": (TEXT,),
    "mem_weekday_alarm": (TEXT,),
    "mem_weekend_alarm": (TEXT,),
    "move_event_later": (DATE,),
    "note_phone_of_relation": (TEXT,),
    "paid_to_payee": (SUM,),
    "party_guests_from_note": (TEXT,),
    "pay_back_lenders": (TEXT,),
    "pay_invoice_email": (TEXT,),
    "postpone_reminder": (DATE,),
    "sa_alarm_before_event": (TEXT, DATE,),
    "sa_cheaper_to_note": (TEXT,),
    "sa_checkout_home": (TEXT,),
    "sa_closer_of_two": (TEXT,),
    "sa_email_to_event": (TEXT, DATE,),
    "sa_eta_to_text": (TEXT,),
    "sa_event_place_to_contact": (TEXT,),
    "sa_latest_subject_to_note": (TEXT,),
    "sa_meeting_via_scheduler": (TEXT, DATE,),
    "sa_next_event_place_and_alarm": (TEXT, DATE,),
    "sa_note_to_setting": (TEXT,),
    "sa_parallel_errands": (TEXT,),
    "sa_photo_to_contact": (TEXT,),
    "sa_place_to_friend": (TEXT,),
    "skill_bedtime": (DATE,),
    "skill_block_time": (DATE,),
    "skill_focus": (SUM,),
    "skill_landing": (TEXT,),
    "skill_meeting_by_email": (DATE,),
    "skill_meeting_with_sender": (DATE,),
    "skill_nap": (SUM,),
    "skill_schedule_meeting": (DATE,),
    "skill_travel": (TEXT,),
    "sleep_average": (SUM,),
    "slot_on_event_day": (SUM,),
    "spent_at_store": (SUM, DATE,),
    "text_relation": (TEXT,),
    "timer_for": (SUM,),
    "transfer_half": (SUM, TEXT,),
    "umbrella_for_visit": (TEXT, DATE,),
    "umbrella_reminder": (TEXT, DATE,),
    "unpaid_invoices_from_relation": (TEXT,),
    "warmest_saved_city": (DATE,),
    "weight_lost": (SUM,),
}


def derived_rules(template: str) -> tuple[str, ...]:
    """The rules `template` declares (an errand `a__and__b` or a composed task `composed:a+b`: its
    parts' and its own), sorted."""
    rules = set(DERIVED.get(template, ()))
    parts = template.removeprefix("composed:").split("+") if template.startswith("composed:") \
        else template.split("__and__")
    for part in parts if len(parts) > 1 else ():
        rules.update(derived_rules(part))
    return tuple(sorted(rules))
