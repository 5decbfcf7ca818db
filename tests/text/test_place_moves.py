"""Where a move takes people, on short made-up texts: someone shown or led into a place is there;
going out into the weather names no place; a building named with its article and no word for
a place is where someone walks to it, and a room that opens the next sentence is a room of it; a
setting that opens its sentence is where the narration after it stands; a vehicle leaving a place
keeps its people aboard; in Chinese, at a new time of the night someone at a window or in bed is
at home, and a place someone only means to go to is not where they are."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible
from tests.text.test_shot_places import places_of

# More of the same book: the bible learns its people from it (a name said once or twice is no one's).
_WHO = (
    "Nell Ashby, Cora Lind, Piet Haas, Ilse Brandt and Nils Berg met every Sunday. Nell talked, Cora sang, "
    "Piet cooked, Ilse read and Nils drank. Nell, Cora, Piet, Ilse and Nils were old friends."
)


def test_someone_shown_or_led_into_a_place_is_there_a_thing_carried_in_is_not() -> None:
    """ "showed her into a narrow study": the object of the move is in the study, though the one
    who moves her is nobody the bible names, and so are the subjects of a passive move (the guests
    were ushered into the ballroom); "took her trunk into the shed" moves a trunk, and Nell stays
    in the yard."""
    shown = ["Nell waited in the yard. Nell yawned.", "A footman showed her into a narrow study. A judge was writing."]
    assert places_of(shown, "en", book=_WHO) == ["yard", "study"]
    passive = ["Nell waited in the yard. Nell yawned.", "The guests were ushered into the ballroom. Music played."]
    assert places_of(passive, "en", book=_WHO) == ["yard", "ballroom"]
    carried = ["Nell waited in the yard. Nell yawned.", "A porter took her trunk into the shed. Nell sighed."]
    assert places_of(carried, "en", book=_WHO) == ["yard", "yard"]


def test_going_out_into_the_weather_names_no_place() -> None:
    """ "all of them ran out into the rain": a number of them are people, and they are no longer in
    the kitchen they left; the rain is no place (see test_place_weather.py for where they are)."""
    shots = [
        "Cora and Piet sat in the kitchen. Cora laughed.",
        "When the clock struck, all of them ran out into the rain.",
    ]
    assert places_of(shots, "en", book=_WHO) == ["kitchen", None]
    assert "rain" not in build_bible(["\n\n".join(shots)], "en").place_names


def test_a_building_named_with_its_article_is_a_place_where_someone_walks_to_it() -> None:
    """ "strolled over to the Lamb in the town. The parlour was warm": the Lamb is a place (the
    town is its address), the parlour a room of it (the Lamb's parlour) that the shot stands in; a name with its article
    someone reads (in the Herald) or one that is a title (went to the Duke of Orme) is no place."""
    text = "After supper Nils strolled over to the Lamb in the town. The parlour was warm and loud. Nils drank."
    names = build_bible([text + " Nils read it in the Herald. Then Nils went to the Duke of Orme."], "en").place_names
    assert "Lamb" in names and "Herald" not in names and "Duke" not in names
    assert places_of([text, "Nils laughed at a joke. Nils drank again."], "en", book=_WHO) == ["Lamb's parlour"] * 2


def test_a_setting_that_opens_its_sentence_holds_the_people_after_it() -> None:
    """ "On the steamer the cabins were cramped. Ilse slept badly": the steamer is where Ilse is;
    a setting opening a sentence with nobody in it nor in the next (In the cellar the wine was
    cold. The house was silent.) does not take the shot from where Ilse was put."""
    steamer = ["Ilse sat in the garden. Ilse read.", "On the steamer the cabins were cramped. Ilse slept badly."]
    assert places_of(steamer, "en", book=_WHO) == ["garden", "steamer"]
    quiet = ["Ilse sat in the garden. Ilse read.", "In the cellar the wine was cold. The house was silent."]
    assert places_of(quiet, "en", book=_WHO) == ["garden", "garden"]


def test_a_vehicle_leaving_a_place_keeps_its_people_aboard() -> None:
    """ "the train had left the station": Ilse is still in the carriage; Ilse leaving the station
    herself is no longer there."""
    aboard = [
        "Ilse found a seat in the carriage. Ilse smiled.",
        "The train had left the station and Ilse opened her book. Ilse read.",
    ]
    assert places_of(aboard, "en", book=_WHO) == ["carriage", "carriage"]
    gone = ["Ilse waited in the station. Ilse smiled.", "At noon Ilse left the station and walked on. Ilse hummed."]
    assert places_of(gone, "en", book=_WHO) == ["station", None]


def test_zh_at_a_window_or_in_bed_at_a_new_time_of_night_is_at_home() -> None:
    """夜里，阿兰靠在窗边: a new time of the night and a window with no place named is home (家), not
    the market of the day; at noon a bed is the tavern’s bed (the place held), and a bed the clause
    names a place for (躺在客栈的床上) is no home."""
    day = ["阿兰在集市上卖菜。阿兰笑了。", "夜里，阿兰靠在窗边发呆。"]
    assert places_of(day, "zh") == ["集市", "家"]
    noon = ["阿兰走进酒店。阿兰笑了。", "中午，阿兰躺在床上歇了一会儿。"]
    assert places_of(noon, "zh") == ["酒店", "酒店"]


def test_zh_a_place_someone_only_means_to_go_to_is_not_where_they_are() -> None:
    """老孙想在城里开一家铺子: he is still in the teahouse; 打算去 the same."""
    shots = ["老孙走进茶馆。老孙笑了。", "老孙说他想在城里开一家铺子，还打算去码头上看看。"]
    assert places_of(shots, "zh") == ["茶馆", "茶馆"]


def test_zh_coming_out_of_a_place_leaves_it_and_a_place_said_with_where_it_is_is_reached() -> None:
    """老周从茶馆出来: he is no longer in the teahouse once the shot is over; 领到后面的柴房: he is in
    the woodshed (where it is, said with 的, stands between the move and the place); a dyke (河堤)
    is a place."""
    out = ["老周走进茶馆。老周喝茶。", "老周从茶馆出来。", "老周叹了口气。"]
    assert places_of(out, "zh") == ["茶馆", "茶馆", None]
    led = ["老周站在院子里。", "伙计把他领到后面的柴房，关上了门。"]
    assert places_of(led, "zh") == ["院子", "柴房"]
    assert places_of(["老周站在河堤上，看着河水。"], "zh") == ["河堤"]


def test_a_place_only_listened_to_is_not_where_someone_is() -> None:
    """ "Piet listened to the owls in the wood": the owls are in the wood, Piet stays in the parlour."""
    shots = ["Piet sat in the parlour. Piet yawned.", "Late that night Piet listened to the owls in the wood."]
    assert places_of(shots, "en", book=_WHO) == ["parlour", "parlour"]
