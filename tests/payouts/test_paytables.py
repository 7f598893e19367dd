"""The default paytables fixture: one per bet, each valid and with its source."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from payouts.models import Paytable
from payouts.specials import BETS


@pytest.mark.django_db
def test_fixture_loads_a_valid_default_for_every_bet():
    call_command("loaddata", "default_paytables", verbosity=0)
    defaults = {p.bet_code: p for p in Paytable.objects.filter(is_default=True)}
    assert set(defaults) == set(BETS)
    for paytable in defaults.values():
        paytable.full_clean()
        assert len(paytable.source) > 40


@pytest.mark.django_db
def test_a_paytable_with_an_unknown_combination_is_refused():
    paytable = Paytable(bet_code="pair", name="x", pays={"triple": 5}, source="test")
    with pytest.raises(ValidationError) as exc:
        paytable.full_clean()
    assert "pair has no combination 'triple'" in str(exc.value)
