"""Plugins that cannot be made raise the exception that matches the C API's status for the same
mistake: an unknown name is floe.UnknownPlugin (FLOE_STATUS_UNKNOWN_PLUGIN; a ConfigError too),
bad parameters floe.ConfigError (FLOE_STATUS_CONFIG), a library that does not load
floe.PluginFailed (FLOE_STATUS_FAILED)."""

import pytest

import floe


@pytest.mark.parametrize("make", [floe.Reward, floe.Curriculum, floe.Engineer], ids=["reward", "curriculum", "engineer"])
def test_an_unknown_name_is_unknown_plugin(make):
    with pytest.raises(floe.UnknownPlugin, match="nope") as info:
        make("nope")
    assert isinstance(info.value, floe.ConfigError) and not isinstance(info.value, floe.PluginFailed)
    assert type(info.value).__name__ == "UnknownPlugin"


def test_the_other_ways_a_plugin_is_refused_keep_their_classes():
    with pytest.raises(floe.ConfigError) as info:
        floe.Reward("tiered", {"valid": "yes"})
    assert not isinstance(info.value, floe.UnknownPlugin)
    with pytest.raises(floe.PluginFailed, match="/no/such/lib.so"):
        floe.Reward("x", library="/no/such/lib.so")
