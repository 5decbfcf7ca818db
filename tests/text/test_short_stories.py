"""Short stories nobody tuned the rules for: the people of a few pages are found although each is
named only a handful of times, never as an object.

Invariant: a name built like a name (surname and given name, 小/老/阿 and one character) that
opens sentences ending in its own speech is a character, however short the text; a phrase that
opens clauses and speaks (即开口道, 急回头道) is none.
"""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible

_STORY = (
    "天黑了，周大顺推着车进了村。他四十来岁，一脸胡子。\n\n"
    "周大顺放下车，问道：“有人么？”\n\n"
    "屋里走出一个小孩。小孩道：“我娘不在家。”\n\n"
    "周大顺从怀里摸出一块糖，递过去，道：“给你。”\n\n"
    "过了一会，钱月娥提着水桶回来了。钱月娥看了看车，皱着眉道：“你又赌输了？”\n\n"
    "钱月娥把水桶放下，叹了口气，说：“进来吧。”\n\n"
    "那小孩急回头道：“娘！”他即开口道：“我饿了。”急回头道：“娘，我饿。”\n"
)


def test_zh_people_who_speak_in_their_own_sentences_are_characters_of_a_short_story() -> None:
    """周大顺 and 钱月娥 each open two or three sentences that end in their speech and are never
    an object: both are characters; the clause openers 急回头 and 即开口 are not."""
    names = set(build_bible([_STORY], "zh").canonical)
    assert {"周大顺", "钱月娥"} <= names
    assert not {"急回头", "即开口"} & names


def test_en_a_bare_name_ending_in_a_surname_the_text_gives_someone_is_no_place() -> None:
    """ "Miss Alder" says Alder is a family's name: "a letter from Jonah Alder" is from her kin,
    not from a place; "from Dunmore", a name no one bears, still is."""
    text = (
        "“Miss Alder,” he said, “this came for you.” Ruth took it. “From Jonah Alder,” said the boy. "
        "Ruth laughed. Ruth read it twice. The boy had walked from Dunmore. Ruth smiled."
    )
    places = set(build_bible([text], "en").place_names)
    assert "Jonah Alder" not in places and "Dunmore" in places
