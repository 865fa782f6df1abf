import pytest

from coexist.core.params import Param, ParameterError, Spec, check_array, ordered

SPEC = Spec(
    (
        Param("buffer_bdp", float, 2.0, low=1.0, high=100.0, low_open=True),
        Param("n_flows", int, 10, low=2, high=50),
        Param("rtts_ms", list, [20.0], low=0.0, low_open=True),
        Param("aqm", str, "droptail", choices=("droptail", "red")),
        Param("lo", float, 1.5, low=1.0),
        Param("hi", float, 30.0, low=1.0),
    ),
    (ordered("lo", "hi"),),
)


def test_defaults_validate():
    assert SPEC.validate(SPEC.defaults()) == SPEC.defaults()


def test_int_widens_to_float_but_not_the_reverse():
    assert SPEC.validate({"buffer_bdp": 3}, partial=True)["buffer_bdp"] == 3.0
    with pytest.raises(ParameterError, match="'n_flows' = 2.5"):
        SPEC.validate({"n_flows": 2.5}, partial=True)


def test_unknown_name_lists_accepted_names():
    with pytest.raises(ParameterError) as err:
        SPEC.validate({"no_such_param": 1}, partial=True)
    msg = str(err.value)
    assert "no_such_param" in msg and "buffer_bdp" in msg and "n_flows" in msg


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("buffer_bdp", 1.0, "1.0 < buffer_bdp <= 100.0"),
        ("buffer_bdp", float("nan"), "not finite"),
        ("buffer_bdp", "2", "got str"),
        ("buffer_bdp", True, "got bool"),
        ("n_flows", 51, "2 <= n_flows <= 50"),
        ("aqm", "codel", "one of 'droptail', 'red'"),
        ("rtts_ms", [10.0, -1.0], "list of numbers"),
        ("rtts_ms", [], "non-empty list"),
    ],
)
def test_bad_values_name_parameter_value_and_range(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        SPEC.validate({name: value}, partial=True)
    msg = str(err.value)
    assert repr(name) in msg and fragment in msg


def test_cross_parameter_rule():
    with pytest.raises(ParameterError, match="'lo' = 40.0 must be less than 'hi' = 30.0"):
        SPEC.validate({"lo": 40.0}, partial=True)


def test_parse_from_command_line_strings():
    assert SPEC.get("rtts_ms").parse("5, 20,80") == [5.0, 20.0, 80.0]
    assert SPEC.get("n_flows").parse("7") == 7
    with pytest.raises(ParameterError, match="not parseable"):
        SPEC.get("n_flows").parse("seven")


def test_missing_names_in_notebook_namespace():
    with pytest.raises(ParameterError, match="does not define: n_flows"):
        SPEC.from_namespace({k: v for k, v in SPEC.defaults().items() if k != "n_flows"})


def test_check_array_reports_first_offender():
    with pytest.raises(ParameterError, match="'x' = 0.5 is out of range"):
        check_array("x", [2.0, 0.5, 0.1], low=1.0)
    with pytest.raises(ParameterError, match="not numeric"):
        check_array("x", "abc")
    with pytest.raises(ParameterError, match="'n' = 1.5"):
        check_array("n", [1, 1.5], integer=True)


@pytest.mark.parametrize("text", ["1_0", "１０", "1_000.5"])
def test_numbers_with_underscores_or_other_digits_are_refused(text):
    """Python's int() and float() read "1_0" as 10 and full-width digits as digits; a
    parameter does not."""
    for kind in (int, float):
        with pytest.raises(ParameterError, match="not parseable"):
            Param("x", kind, None).parse(text)


def test_within_names_the_values_outside_the_coarser_grid():
    from coexist.core.params import within

    spec = Spec((Param("rtts_ms", list, [5.0, 40.0], low=0.0),
                 Param("multi_rtts_ms", list, [40.0], low=0.0)),
                (within("multi_rtts_ms", "rtts_ms"),))
    assert spec.validate(spec.defaults())["multi_rtts_ms"] == [40.0]
    with pytest.raises(ParameterError, match=r"'multi_rtts_ms' = \[40.0, 20.0\] is invalid "
                       r"\(\[20.0\] not in 'rtts_ms'\); valid: values of 'rtts_ms'"):
        spec.validate({"rtts_ms": [5.0, 40.0], "multi_rtts_ms": [40.0, 20.0]})
