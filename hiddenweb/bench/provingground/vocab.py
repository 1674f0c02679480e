"""Vocabularies of the proving ground: the one copy.

The generated sites draw every word, city and author name from here;
``hiddenweb/lvs_data/default.toml`` (the crawler's LVS table) is *written from*
these lists by :func:`lvs_toml`
(``hiddenweb site lvs -o hiddenweb/lvs_data/default.toml``) and a test checks that the file still
contains every value listed here, so the two cannot drift apart. The LVS also holds values the
sites never use (``DISTRACTORS``, unused cities and authors, synonyms), so that only some LVS
values give results — as on a real site.
"""

from __future__ import annotations

# --- topical vocabularies (lost-sheep protocol: page text = random words of a topic) -----------
TOPICS: dict[str, tuple[str, ...]] = {
    "travel": tuple(
        """airport hotel beach island journey passport luggage cruise resort ticket
        tourist guide map harbor mountain valley lake village castle museum ferry train station
        hostel backpack voyage coast desert canyon glacier cabin camping trail summit festival
        souvenir postcard visa""".split()
    ),
    "cooking": tuple(
        """recipe kitchen oven flour sugar butter garlic onion pepper salt tomato
        basil olive pasta noodle soup bread cake cookie sauce grill roast bake spoon knife skillet
        dough yeast honey cheese cream lemon cinnamon vanilla dessert salad""".split()
    ),
    "sports": tuple(
        """football soccer tennis golf hockey baseball basketball cricket rugby
        stadium coach referee tournament league champion medal marathon sprint swimmer cyclist
        racket goal penalty trophy athlete training fitness jersey whistle score season playoff
        dribble tackle serve rowing""".split()
    ),
    "music": tuple(
        """guitar piano violin drum trumpet flute cello melody rhythm harmony chord
        concert orchestra choir singer album lyric song ballad jazz blues opera symphony tempo
        tune band chorus vinyl record studio microphone rehearsal composer sonata banjo
        harp""".split()
    ),
    "science": tuple(
        """atom molecule electron proton neutron galaxy planet comet telescope
        microscope laboratory experiment theory gravity energy magnet crystal fossil genome
        protein enzyme cell bacteria virus climate volcano earthquake orbit rocket satellite
        physics chemistry biology quantum laser""".split()
    ),
    "garden": tuple(
        """garden flower rose tulip daisy orchid seed soil compost mulch shovel
        rake hedge lawn fence greenhouse sprout bulb fern ivy cactus herb mint lavender
        sunflower orchard apple pear cherry plum vine pumpkin carrot potato cabbage""".split()
    ),
    "finance": tuple(
        """bank loan mortgage credit debit interest savings budget invoice receipt
        tax pension insurance dividend stock bond fund broker market inflation currency dollar
        euro wallet payment refund salary account deposit balance ledger audit profit revenue
        capital""".split()
    ),
    "health": tuple(
        """doctor nurse clinic hospital patient medicine vaccine fever cough allergy
        vitamin diet exercise sleep therapy surgery dentist tooth heart lung kidney liver bone
        muscle blood pulse pharmacy bandage ointment injection wellness yoga nutrition
        posture""".split()
    ),
    "animals": tuple(
        """dog cat horse rabbit hamster parrot eagle owl falcon sparrow salmon trout
        shark whale dolphin otter beaver badger fox wolf bear deer moose tiger lion zebra giraffe
        elephant monkey panda koala kangaroo penguin turtle lizard""".split()
    ),
    "tech": tuple(
        """computer laptop keyboard mouse monitor printer router modem server cable
        battery charger phone tablet camera software hardware database network browser website
        password backup cloud download upload pixel robot sensor circuit chip memory processor
        algorithm""".split()
    ),
}

#: alternative spellings / synonyms → the vocabulary word a site indexes (many values → one page)
SYNONYMS: dict[str, str] = {
    "aeroplane": "airport",
    "hotels": "hotel",
    "seaside": "beach",
    "trip": "journey",
    "baggage": "luggage",
    "railway": "train",
    "receipe": "recipe",
    "cookies": "cookie",
    "biscuit": "cookie",
    "spaghetti": "pasta",
    "footy": "football",
    "tennis ball": "tennis",
    "pianoforte": "piano",
    "fiddle": "violin",
    "drums": "drum",
    "spaceship": "rocket",
    "microbe": "bacteria",
    "blossom": "flower",
    "roses": "rose",
    "loans": "loan",
    "taxes": "tax",
    "physician": "doctor",
    "medication": "medicine",
    "puppy": "dog",
    "kitten": "cat",
    "pony": "horse",
    "notebook": "laptop",
    "cellphone": "phone",
    "smartphone": "phone",
    "robots": "robot",
}

#: words no generated site ever uses (LVS values that never give results)
DISTRACTORS: tuple[str, ...] = tuple(
    """abacus bamboo carnival daffodil ember fjord gazebo
    hammock igloo jigsaw kaleidoscope lantern meadow nebula obelisk paddle quiver raffle
    saddle tapestry umbrella velvet walrus xylophone yacht zeppelin anchor blizzard chimney
    dungeon easel flannel goblet hurricane inkwell jasmine kettle lagoon mosaic nutmeg oasis
    pebble quartz riddle scarf thimble utensil vortex willow yarn zenith almanac buckle
    cobblestone dandelion""".split()
)

# --- cities and their regions (POST locator forms: the city only counts inside its region) -----
#: region code → region name (the locator forms' select)
REGIONS: dict[str, str] = {
    "CA": "California",
    "TX": "Texas",
    "NY": "New York",
    "IL": "Illinois",
    "MA": "Massachusetts",
    "OR": "Oregon",
    "ME": "Maine",
    "OH": "Ohio",
    "WA": "Washington",
    "FL": "Florida",
}
#: (city, region code); a few names exist in two regions (Springfield, Portland, Columbus…)
CITIES: tuple[tuple[str, str], ...] = (
    ("Los Angeles", "CA"),
    ("San Diego", "CA"),
    ("San Jose", "CA"),
    ("Sacramento", "CA"),
    ("Fresno", "CA"),
    ("Oakland", "CA"),
    ("Houston", "TX"),
    ("Dallas", "TX"),
    ("Austin", "TX"),
    ("El Paso", "TX"),
    ("San Antonio", "TX"),
    ("Paris", "TX"),
    ("New York", "NY"),
    ("Buffalo", "NY"),
    ("Rochester", "NY"),
    ("Albany", "NY"),
    ("Syracuse", "NY"),
    ("Chicago", "IL"),
    ("Springfield", "IL"),
    ("Peoria", "IL"),
    ("Naperville", "IL"),
    ("Boston", "MA"),
    ("Worcester", "MA"),
    ("Springfield", "MA"),
    ("Cambridge", "MA"),
    ("Salem", "MA"),
    ("Portland", "OR"),
    ("Salem", "OR"),
    ("Eugene", "OR"),
    ("Bend", "OR"),
    ("Portland", "ME"),
    ("Bangor", "ME"),
    ("Augusta", "ME"),
    ("Columbus", "OH"),
    ("Cleveland", "OH"),
    ("Cincinnati", "OH"),
    ("Dayton", "OH"),
    ("Toledo", "OH"),
    ("Seattle", "WA"),
    ("Spokane", "WA"),
    ("Tacoma", "WA"),
    ("Olympia", "WA"),
    ("Miami", "FL"),
    ("Orlando", "FL"),
    ("Tampa", "FL"),
    ("Jacksonville", "FL"),
    ("Tallahassee", "FL"),
    ("Columbus", "TX"),
)
#: cities only in the LVS (no site has records there)
DISTRACTOR_CITIES: tuple[str, ...] = (
    "Denver",
    "Phoenix",
    "Atlanta",
    "Detroit",
    "Nashville",
    "Memphis",
    "Baltimore",
    "Omaha",
    "Boise",
    "Reno",
    "Tulsa",
    "Anchorage",
    "Honolulu",
    "Richmond",
    "Madison",
    "Raleigh",
)

# --- authors (POST archive forms) ---------------------------------------------------------------
AUTHORS: tuple[str, ...] = (
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Mary Shelley",
    "Jane Austen",
    "Charles Dickens",
    "Leo Tolstoy",
    "Virginia Woolf",
    "George Orwell",
    "Franz Kafka",
    "Emily Bronte",
    "Mark Twain",
    "Herman Melville",
    "Jules Verne",
    "Oscar Wilde",
    "Homer Simpson",
    "Agatha Christie",
    "Arthur Conan Doyle",
    "Edgar Allan Poe",
    "Toni Morrison",
    "Italo Calvino",
    "Jorge Luis Borges",
    "Gabriel Garcia Marquez",
    "Chinua Achebe",
    "Haruki Murakami",
    "Umberto Eco",
    "Albert Camus",
    "Simone Weil",
    "Hannah Arendt",
    "Marie Curie",
    "Rachel Carson",
    "Carl Sagan",
    "Richard Feynman",
    "Isaac Asimov",
    "Ursula Le Guin",
    "Octavia Butler",
    "Ray Bradbury",
    "Philip Dick",
    "Kurt Vonnegut",
    "Sylvia Plath",
    "Walt Whitman",
    "Emily Dickinson",
    "Robert Frost",
    "Maya Angelou",
    "Langston Hughes",
    "Zadie Smith",
    "Kazuo Ishiguro",
    "Margaret Atwood",
)
DISTRACTOR_AUTHORS: tuple[str, ...] = (
    "John Smith",
    "Jane Doe",
    "Max Mustermann",
    "Erika Musterfrau",
    "Joe Bloggs",
    "Mario Rossi",
    "Juan Perez",
    "Anna Svensson",
    "Pierre Dupont",
    "Ivan Petrov",
)

# --- finite domains (GET filter forms) ----------------------------------------------------------
CATEGORIES: tuple[str, ...] = (
    "books",
    "music",
    "films",
    "games",
    "tools",
    "toys",
    "garden",
    "kitchen",
    "sports",
    "office",
    "jewellery",
    "shoes",
)
COLOURS: tuple[str, ...] = ("red", "green", "blue", "black", "white", "yellow", "purple")

# --- derived --------------------------------------------------------------------------------
TOPIC_NAMES: tuple[str, ...] = tuple(TOPICS)
ALL_WORDS: tuple[str, ...] = tuple(w for words in TOPICS.values() for w in words)
WORD_SET: frozenset[str] = frozenset(ALL_WORDS)
assert len(WORD_SET) == len(ALL_WORDS), "a word is in two topics"
assert all(v in WORD_SET for v in SYNONYMS.values())
assert not WORD_SET & set(DISTRACTORS)

#: LVS tables written to hiddenweb/lvs_data/default.toml: name → (labels, values)
LVS_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "keyword": (
        ("keyword", "keywords", "search", "query", "terms", "q", "kw", "find"),
        ALL_WORDS + tuple(SYNONYMS) + DISTRACTORS,
    ),
    "city": (
        ("city", "town", "location", "place", "locality"),
        tuple(dict.fromkeys(c for c, _ in CITIES)) + DISTRACTOR_CITIES,
    ),
    "author": (
        ("author", "authors", "name", "writer", "creator", "by"),
        AUTHORS + DISTRACTOR_AUTHORS,
    ),
    "region": (("region", "state", "province"), tuple(REGIONS)),
}


def _toml_list(values: tuple[str, ...], indent: str = "    ") -> str:
    lines, line = [], indent
    for v in values:
        item = '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '", '
        if len(line) + len(item) > 98:
            lines.append(line.rstrip())
            line = indent
        line += item
    lines.append(line.rstrip())
    return "[\n" + "\n".join(lines) + "\n]"


#: Where the distractor cities are (LVS only: no site offers these states). A gazetteer knows
#: every city's state, not only those of the states a site happens to offer.
DISTRACTOR_REGIONS: dict[str, str] = {
    "Denver": "CO", "Phoenix": "AZ", "Atlanta": "GA", "Detroit": "MI", "Nashville": "TN",
    "Memphis": "TN", "Baltimore": "MD", "Omaha": "NE", "Boise": "ID", "Reno": "NV",
    "Tulsa": "OK", "Anchorage": "AK", "Honolulu": "HI", "Richmond": "VA", "Madison": "WI",
    "Raleigh": "NC",
}

#: What a gazetteer knows and a crawler may be given: the cities of each region (LVS ``within``)
LVS_WITHIN: dict[str, dict[str, dict[str, list[str]]]] = {
    "city": {"region": {
        **{code: [c for c, r in CITIES if r == code] for code in REGIONS},
        **{code: [c for c in DISTRACTOR_CITIES if DISTRACTOR_REGIONS.get(c) == code]
           for code in dict.fromkeys(DISTRACTOR_REGIONS.values())},
    }},
}


#: Labels whose values are any word (LVS ``open``): a search box; cities and authors are typed
LVS_OPEN = ("keyword",)


def lvs_toml() -> str:
    """The text of ``hiddenweb/lvs_data/default.toml``, from the lists above."""
    out = [
        "# LVS table (labelled value sets) of hiddenweb: one TOML table per label.",
        "#   labels = words that name a form field; values = candidate values, best first.",
        "# Written by `hiddenweb site lvs -o hiddenweb/lvs_data/default.toml` from",
        "# hiddenweb/bench/provingground/vocab.py (the proving ground's vocabularies); you may add",
        "# tables and values by hand — tests only check that the proving ground's values are here.",
        "",
    ]
    for name, (labels, values) in LVS_TABLES.items():
        out.append(f"[{name}]")
        if name in LVS_OPEN:
            out.append("open = true")
        out.append("labels = " + _toml_list(labels))
        out.append("values = " + _toml_list(values))
        out.append("")
        for qualifier, groups in LVS_WITHIN.get(name, {}).items():
            out.append(f"[{name}.within.{qualifier}]")
            out += [f"{key} = " + _toml_list(group) for key, group in groups.items()]
            out.append("")
    return "\n".join(out)
