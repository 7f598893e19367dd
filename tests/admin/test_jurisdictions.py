"""The seed jurisdictions as data: every value and where it comes from."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from tablehub.configuration import check_tables_under
from tablehub.models import Jurisdiction

pytestmark = pytest.mark.django_db

WA_BETS = [
    "21+3", "top_21+3", "qq_as_lucky_ladies", "c3", "lucky_aces", "lucky_ladies", "lucky_lucky",
    "match", "a-2", "blackjack_bonus", "poker_3", "poker_3_bonus", "kk", "jj", "qq", "pair",
    "suits", "19+", "7s",
]  # fmt: skip


def test_washington_tribal_approval_from_seed_001(jurisdictions):
    wa = jurisdictions["wa-tribal"]
    assert wa.approved_special_bets == WA_BETS  # the 19 bets of lines 19-37, in order
    assert "bust" not in wa.approved_special_bets
    assert wa.blackjack_pays == ["3:2", "6:5", "1:1"]
    assert (wa.max_splits, wa.max_decision_seconds, wa.stale_game_hours) == (3, 25, 24)
    assert (wa.hit_on_timeout_allowed, wa.disputes_allowed, wa.dispute_window_seconds) == (
        False,
        True,
        0,
    )
    assert wa.min_rtp is None and wa.let_it_play_cap is None
    assert wa.required_rules == {"hit_split_aces": False}
    for citation in ("lines 17-37", "line 406", "line 289", "line 368", "line 275", "394-398"):
        assert citation in wa.source


def test_sweet_16_rules_from_seed_003(jurisdictions):
    s16 = jurisdictions["sweet16-hitsquad"]
    assert s16.approved_special_bets == ["sweet_16"]
    assert s16.blackjack_pays == ["3:2"]
    assert (s16.max_splits, s16.stale_game_hours, s16.min_rtp) == (1, 840, Decimal("0.9518"))
    assert s16.required_rules["decks"] == 8
    assert s16.required_rules["dealer_hits_soft_17"] is False
    assert s16.required_rules["special_without_main"] == 0
    for citation in ("line 108", "line 166", "line 187", "line 173", "line 130"):
        assert citation in s16.source


def test_loading_the_fixture_twice_updates_in_place(jurisdictions, run_command):
    assert run_command("loaddata", "jurisdictions")[0] == 0
    assert Jurisdiction.objects.count() == 2


def test_a_jurisdiction_refuses_unknown_codes(jurisdictions):
    wa = jurisdictions["wa-tribal"]
    wa.approved_special_bets = ["21+3", "21+4"]
    wa.blackjack_pays = ["2:1"]
    wa.required_rules = {"decks": 9}
    with pytest.raises(ValidationError) as exc:
        wa.full_clean()
    assert exc.value.message_dict == {
        "approved_special_bets": ["unknown special bet '21+4'"],
        "blackjack_pays": ["unknown payout '2:1' (known: 3:2, 6:5, 1:1)"],
        "required_rules": ["rules: decks must be a whole number from 1 to 8, got 9"],
    }


def test_tightening_a_jurisdiction_under_a_configured_table_is_refused(table, other_table):
    wa = Jurisdiction.objects.get(code="wa-tribal")
    wa.max_splits = 1  # both tables split to 4 hands (max_splits 3)
    wa.approved_special_bets = [b for b in wa.approved_special_bets if b != "pair"]
    wa.full_clean()  # valid in itself
    with pytest.raises(ValidationError) as exc:
        check_tables_under(wa)  # the configuration service's check (the admin form runs it)
    (message,) = exc.value.messages
    assert message.startswith("This change would break the current configuration of 2 tables")
    for name in ("WA 1", "WA 2"):
        assert f"table {name} (configuration v1): " in message
    assert message.count("allows at most 1") == 2
    assert message.count("pair is not approved in Washington State tribal casinos") == 2
    assert Jurisdiction.objects.get(code="wa-tribal").max_splits == 3  # nothing changed


def test_a_change_every_current_configuration_allows_is_accepted(table):
    wa = Jurisdiction.objects.get(code="wa-tribal")
    wa.max_decision_seconds = 20  # the table's timers are 15 s
    wa.approved_special_bets = ["21+3", "pair"]  # what the table offers
    wa.full_clean()
    check_tables_under(wa)
    wa.max_decision_seconds = 10
    wa.full_clean()
    with pytest.raises(ValidationError, match=r"table WA 1 \(configuration v1\): .*decision"):
        check_tables_under(wa)
