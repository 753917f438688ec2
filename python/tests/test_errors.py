import pickle
import traceback

import pytest

import floe
from floe import _floe

# Every exception class the compiled module defines, found by looking, so that a class added
# later is held to the same names.
CLASSES = sorted(
    (name, obj)
    for name, obj in vars(_floe).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
)


def test_every_error_class_is_found():
    assert [name for name, _ in CLASSES] == [
        "BadInput",
        "BadOutput",
        "ConfigError",
        "EngineFailed",
        "Failed",
        "FloeError",
        "PluginFailed",
        "TooLarge",
        "UnknownPlugin",
    ]


@pytest.mark.parametrize("name,cls", CLASSES, ids=[name for name, _ in CLASSES])
def test_error_class_names_match_their_attribute(name, cls):
    assert cls.__name__ == name
    assert cls.__qualname__ == name
    assert cls.__module__ == "floe"
    assert getattr(floe, name) is cls
    assert name in floe.__all__
    assert issubclass(cls, floe.FloeError)
    # The module and name lead back to the class, so an error pickles (as Ray and
    # multiprocessing do) and comes back as the same class with the same message.
    back = pickle.loads(pickle.dumps(cls("the message")))
    assert type(back) is cls and str(back) == "the message"


def test_the_classes_of_refused_values_are_value_errors():
    """Values floe refuses raise ValueError subclasses, so that code written for any library's bad
    values catches them; failures of work, plugins and devices do not."""
    values = {"BadInput", "BadOutput", "ConfigError", "UnknownPlugin"}
    for name, cls in CLASSES:
        assert issubclass(cls, ValueError) == (name in values), name
    assert issubclass(floe.UnknownPlugin, floe.ConfigError)
    assert issubclass(floe.BadOutput, floe.PluginFailed)
    with pytest.raises(ValueError, match="weight 0 is -1"):
        floe.Engine(floe.generate(2, 4, count=2, seed=1)).set_weights([-1.0, 1.0])


def test_a_raised_config_error_shows_its_public_name(small):
    with pytest.raises(floe.ConfigError) as info:
        floe.Engine(small, {"obs_format": "nibbles"})
    assert type(info.value).__name__ == "ConfigError"
    line = traceback.format_exception_only(info.type, info.value)[-1]
    assert line.startswith("floe.ConfigError: "), line
