"""ArabCulture subtopic -> topic, from the paper's Table 8 (L450-463).

The release has no topic column, but every ``sample_id`` ends in an English subtopic
(``'1 | Breakfast'``) and every record has an Arabic ``sub_topic``. The paper's per-topic
analysis (Tables 5 and 7) needs the topic, so the builder derives it here.

Matching ignores case, punctuation and spacing (the release writes ``wedding (other
logistics)`` for Table 8's "Wedding other logistics"). Spellings that differ in more than
that are listed in `ALIASES`, and Arabic names in `ARABIC_SUBTOPICS`; both hold only names
seen in real release rows (the third-party parquet dump cited in
``/work/shared/real/README.md``, usaginoki/medical-kg ``Data/arabculture/sample_*.csv``).
Anything else stays unmapped (topic null) and the build report counts it.
"""

from __future__ import annotations

import re

# Table 8: topic -> its subtopics, in the paper's order. It lists 48 subtopics, not the 54
# the text claims (specs/arabculture.md §1).
TABLE8: dict[str, tuple[str, ...]] = {
    "Food": (
        "Breakfast", "Lunch", "Dinner", "Sahoor (Ramadan)", "Iftar (Ramadan)", "Dessert", "Fruits", "Snacks",
    ),
    "Wedding": (
        "Wedding location", "Wedding food", "Wedding dowry", "Wedding other logistics",
        "Men ceremony vs. women ceremony", "Songs and activities during the wedding",
    ),
    "Holiday Activities": (
        "Traditions before religious holidays", "Traditions during religious holidays",
        "Activities for non-religious holidays",
    ),
    "Daily Activities": (
        "Before going to work/college", "While on the way to college/work",
        "Things you do with colleagues/friends while at work/college",
        "Things you do after coming back from work/uni (men)",
        "Things you do after coming back from work/uni (women)",
        "Household activities (groceries, fixing things, cleaning, etc.)",
        "Things you do in your free time (indoors or outdoors)",
    ),
    "Habits": (
        "Eating habits", "Stereotypes", "Communication habits", "Financial habits", "Gift-giving practices",
        "Cleanliness habits",
    ),
    "Traditional Games": ("Childhood games indoors", "Childhood games outdoors"),
    "Death": ("Before burying", "Burying rituals", "After burying ceremonies", "Inheritance"),
    "Art": ("Musical instruments", "Local songs", "Local dances"),
    "Parenting": ("Parents-child actions", "Grandparents-child actions"),
    "Agriculture": ("What to plant", "While planting", "Harvest"),
    "Idioms": ("Idioms in context",),
    "Family Relationships": ("Between siblings", "With cousins", "Relationship of parents and child"),
}  # fmt: skip

SUBTOPIC_TO_TOPIC: dict[str, str] = {sub: topic for topic, subs in TABLE8.items() for sub in subs}

# Release spellings (English, from sample_id) that normalisation alone does not match.
ALIASES: dict[str, str] = {
    "men cermony vs. women cermony": "Men ceremony vs. women ceremony",
    "traditions before religous holidays": "Traditions before religious holidays",
    "traditions during religous holidays": "Traditions during religious holidays",
}

# Release Arabic sub_topic values -> Table 8 subtopic (only values seen in real rows).
ARABIC_SUBTOPICS: dict[str, str] = {
    "الافطار": "Breakfast",
    "الغداء": "Lunch",
    "العشاء": "Dinner",
    "السحور ( تصبيرة رمضان )": "Sahoor (Ramadan)",
    "افطار رمضان": "Iftar (Ramadan)",
    "حلوى": "Dessert",
    "فاكهة": "Fruits",
    "وجبات خفيفة": "Snacks",
    "مكان الزواج": "Wedding location",
    "طعام الزواج": "Wedding food",
    "مهر الزواج": "Wedding dowry",
    "تجهيزات أخرى للزواج": "Wedding other logistics",
    "احتفالات الزواج للرجال vs احتفالات الزواج للنساء": "Men ceremony vs. women ceremony",
    "الفعاليات والأغاني في حفلات الزواج": "Songs and activities during the wedding",
    "العادات والفعاليات والتجهيزات قبل الأعياد الدينية": "Traditions before religious holidays",
    "العادات في الأعياد الدينية": "Traditions during religious holidays",
}

_ARABIC_MARKS = re.compile("[\u0640\u064b-\u065f\u0670]")  # tatweel and harakat
_ALEF = re.compile("[\u0622\u0623\u0625]")  # آ أ إ -> ا


def normalize(name: str) -> str:
    """Case-, punctuation- and spacing-insensitive key; Arabic loses harakat and hamza-on-alef."""
    text = _ALEF.sub("\u0627", _ARABIC_MARKS.sub("", name)).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


_LOOKUP: dict[str, str] = {
    **{normalize(arabic): SUBTOPIC_TO_TOPIC[sub] for arabic, sub in ARABIC_SUBTOPICS.items()},
    **{normalize(alias): SUBTOPIC_TO_TOPIC[sub] for alias, sub in ALIASES.items()},
    **{normalize(sub): topic for sub, topic in SUBTOPIC_TO_TOPIC.items()},
}


def topic_of(subtopic: str | None, arabic_sub_topic: str | None = None) -> str | None:
    """Table 8 topic of an English subtopic, else of the Arabic ``sub_topic``; None if neither maps."""
    for name in (subtopic, arabic_sub_topic):
        if name and (topic := _LOOKUP.get(normalize(name))):
            return topic
    return None
