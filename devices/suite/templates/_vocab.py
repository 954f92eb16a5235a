"""Value pools of the tool family, each split three ways (train | dev | test, pairwise disjoint).

None of these values occurs in the SimPhone default world (devices/sim/world.py), so a value
in a goal always comes from the instance's own split.
"""

from __future__ import annotations

from devices.suite.pools import Pool

__all__ = [
    "ACCOUNT_NAMES",
    "ACTIVITY",
    "ALBUMS3",
    "ARTISTS",
    "CITIES",
    "COMPANIES3",
    "CUISINES",
    "DELTAS",
    "DISHES",
    "HOTELS",
    "INGREDIENTS",
    "LABELS3",
    "MEDS",
    "PHRASES3",
    "PLACES3",
    "PRODUCTS3",
    "SONGS",
    "SPANS",
    "STORES",
    "TAGS3",
    "TASKS",
    "TIMES3",
    "TITLES3",
    "TOPICS3",
]


def _p(train: str, dev: str, test: str) -> Pool:
    return Pool(tuple(train.split("|")), tuple(test.split("|")), tuple(dev.split("|")))


PHRASES3 = _p("running ten minutes late|see you at the entrance|the keys are under the mat"
              "|bring the charger please|dinner is at seven|I left the gate open",
              "call me when you land|the parcel is at the door|parking is on level two",
              "tickets are booked|the train is delayed|save me a seat|the oven is still on")
TOPICS3 = _p("packing list|book club|garden plan|sprint retro|budget review|wedding gifts",
             "tax checklist|bike repair|school forms|attic insulation|hedge trimming",
             "quarterly goals|move-out plan|camping gear|canal walk|piano recital")
TITLES3 = _p("Dentist checkup|Project kickoff|Parent meeting|Piano lesson|Car service|Design review",
             "Visa interview|Roof inspection|Board review|Tax meeting", "Vet appointment|Lease signing|Eye exam|Pitch rehearsal")
PLACES3 = _p("Bellini Trattoria|Copper Kettle Cafe|Harbor Climbing Gym|Juniper Books|Maple Dental"
             "|Orchard Market", "Saffron House|Tidewater Bakery|Summit Bike Shop",
             "Lantern Cinema|Kestrel Vet Clinic|Willow Spa|Granite Brewery")
STORES = _p("Corner Grocer|Pixel Electronics|Bloom Florist|Ridge Outfitters|Nimbus Coffee|Vale Pharmacy",
            "Harbor Books|Crescent Deli|Atlas Hardware", "Meadow Market|Ember Pizza|Quill Stationers|Solstice Gym")
PRODUCTS3 = _p("running socks|french press|phone stand|travel adapter|wool beanie|ceramic mug",
               "bike light|tea kettle|desk fan|yoga block|bread tin", "camping mug|book stand|wool scarf|rain jacket")
COMPANIES3 = _p("Acme Robotics|Bluefin Labs|Cobalt Health|Dunmore Legal|Evergreen Power|Foxglove Water",
                "Fjord Analytics|Granite Media|Halcyon Air", "Ironwood Telecom|Juniper Gas|Kite Insurance")
CITIES = _p("Porto|Krakow|Ghent|Bergen|Seville|Lyon|Turin|Graz", "Bilbao|Aarhus|Split|Malmo|Nantes",
            "Tallinn|Ljubljana|Valencia|Bologna|Riga")
HOTELS = _p("Harbor View|Old Town Inn|Riverside Lodge|Garden Suites", "Lighthouse Rooms|Mill House|Quayside Hostel|Orchard Rooms",
            "Cedar Court|Station Hotel|Bell Tower Inn")
ARTISTS = _p("The Harbors Two|Nova Lane Duo|Amber Static|Glass Pilots|Low Meridian",
             "Velvet Season|Paper Suns|Hollow Pines", "Kite Theory|Northern Alloy|Quiet Engines")
SONGS = _p("Salt Roads|Neon Rain|Open Water|Long Shadow|Northbound|Silver Lining",
           "Ember Glow|Blue Hour|Loose Change", "Tall Grass|Iron Sky|Night Ferry|Quiet Storm")
ALBUMS3 = _p("Harbor Lights|Satellites|Kitchen Tapes|First Frost", "Midnight Ferries|Afterglow|Paper Harbour",
             "Cartography|Slow Motion|Undertow")
DISHES = _p("Lentil soup|Mushroom risotto|Fish tacos|Chickpea curry|Lemon pasta|Beef stew",
            "Pumpkin gnocchi|Shakshuka|Pad thai", "Paella|Bibimbap|Ratatouille|Falafel wrap")
CUISINES = _p("Italian|Mexican|Indian|French", "Thai|Greek|Turkish", "Spanish|Korean|Lebanese")
INGREDIENTS = _p("red lentils|arborio rice|corn tortillas|chickpeas|lemons|stewing beef",
                 "pumpkin|feta|rice noodles", "saffron|gochujang|aubergine|tahini")
MEDS = _p("Lisinopril|Metformin|Vitamin D|Omega-3|Iron tablets", "Magnesium|Zinc|Melatonin|Vitamin B12",
          "Folic acid|Probiotic|Calcium|Iodine")
ACTIVITY = _p("run|cycle", "swim|yoga", "strength")
TASKS = _p("renew car insurance|book a haircut|return library books|water the plants|pay the nanny"
           "|submit the expense report", "order contact lenses|call the bank|fix the bike|book the vet",
           "send the birthday card|cancel the gym trial|update the resume|pick up dry cleaning")
LABELS3 = _p("Gym|Meds|Standup|School run|Yoga", "Bread out|Team sync|Piano practice", "Plant watering|Pickup laundry|Swim")
TAGS3 = _p("favorite|todo|print|wallpaper", "urgent|keep|backup", "review|frame|scan")
# Times of day people ask for; none is in the older TIMES pool.
TIMES3 = _p("06:30|07:00|07:15|07:30|08:00|08:45", "06:40|07:10|07:40|08:25", "06:50|07:20|08:20|08:40")
# How much dimmer, and how far back: numbers split three ways like any other value.
DELTAS = Pool((5, 10, 15, 20), (35, 40, 45), (25, 30))
SPANS = _p("a week|two weeks", "three weeks|ten days", "twelve days|nine days|eleven days")
ACCOUNT_NAMES = _p("Holiday fund|Car fund|Rainy day|House deposit", "Wedding pot|Bike fund|Pet fund|School fees",
                   "Tax reserve|Gift jar|Travel kitty")
