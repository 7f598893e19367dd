"""What each role sees and may change in the admin, and the configuration form."""

import json
import re
from decimal import Decimal

import pytest
from django import forms
from django.contrib.admin.models import LogEntry

from tablehub.admin import TableConfigForm
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import play

pytestmark = pytest.mark.django_db


def form_data(config=None, table=None):
    """What the configuration form posts when nothing is changed."""
    form = TableConfigForm(instance=config, initial={"table": table.pk} if table else {})
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = str(value)
    if config is not None:
        data.pop("table", None)
    return data


def jurisdiction_form(wa, **changes):
    """What the jurisdiction's change form posts: its current values, with ``changes``."""
    data = {
        "code": wa.code,
        "name": wa.name,
        "source": wa.source,
        "approved_special_bets": wa.approved_special_bets,
        "blackjack_pays": wa.blackjack_pays,
        "max_splits": str(wa.max_splits),
        "required_rules": json.dumps(wa.required_rules),
        "min_rtp": "" if wa.min_rtp is None else str(wa.min_rtp),
        "let_it_play_cap": "" if wa.let_it_play_cap is None else str(wa.let_it_play_cap),
        "max_decision_seconds": str(wa.max_decision_seconds),
        "dispute_window_seconds": str(wa.dispute_window_seconds),
        "stale_game_hours": str(wa.stale_game_hours),
        "abandoned_hands": wa.abandoned_hands,
        "recall_games": str(wa.recall_games),
        "dealer_z_threshold": str(wa.dealer_z_threshold),
        "dealer_p_threshold": str(wa.dealer_p_threshold),
    }
    for optional in (
        "max_stake_per_round",
        "max_session_minutes",
        "reality_check_minutes",
        "idle_minutes",
    ):
        value = getattr(wa, optional)
        data[optional] = "" if value is None else str(value)
    for flag in ("disputes_allowed", "hit_on_timeout_allowed"):
        if getattr(wa, flag):
            data[flag] = "on"
    return data | changes


def config_url(config):
    return f"/admin/tablehub/tableconfig/{config.pk}/change/"


def test_floor_manager_sees_each_paytables_rtp_and_hit_frequency(login, table):
    page = login("floor_manager").get(config_url(table.current_config()))
    assert page.status_code == 200
    html = page.content.decode()
    assert "96.2961%" in html and "9.7264%" in html  # 21+3, default paytable, 8 decks
    assert "95.9036%" in html and "7.4699%" in html  # pair
    assert 'name="_save"' in html
    assert "being computed" in html or "house edge" in html  # the main game, never waited for


def test_the_main_games_return_is_shown_beside_the_configuration(login, table, settings):
    """Issue 9: the admin shows the main game's return from the par-sheet service, cached
    per rule set (computed once here, then read at once)."""
    from payouts.rtp import main_sheet

    settings.TABLEHUB_WARM_PARSHEETS = False  # no background computation behind the test
    config = table.current_config()
    sheet = main_sheet(config.ruleset())  # computes and caches this rule set
    html = login("auditor").get(config_url(config)).content.decode()
    assert f"{sheet['rtp']:.4%} (house edge {sheet['house_edge']:.4%})" in html


def test_saving_a_change_stores_a_new_version(login, table, users):
    v1 = table.current_config()
    data = form_data(v1) | {"timer_decision": "20", "special_pair": ""}
    response = login("floor_manager").post(config_url(v1), data)
    assert response.status_code == 302
    v2 = table.current_config()
    assert v2.version == 2 and v2.pk != v1.pk
    assert v2.timers == {"betting": 15, "decision": 20}
    assert set(v2.special_bets) == {"21+3"}
    assert v2.created_by == users["floor_manager"]
    v1.refresh_from_db()
    assert v1.timers == {"betting": 15, "decision": 15} and set(v1.special_bets) == {"21+3", "pair"}
    assert response["Location"] == config_url(v2)
    page = login("floor_manager").get(response["Location"])
    html = page.content.decode()
    assert "Saved WA 1 configuration version 2: it applies from the next round." in html
    assert "timers.decision" in html  # before -> after
    assert LogEntry.objects.get().object_id == str(v2.pk)


def test_saving_without_a_change_keeps_the_version(login, table):
    v1 = table.current_config()
    response = login("floor_manager").post(config_url(v1), form_data(v1), follow=True)
    assert "Nothing changed: WA 1 keeps version 1." in response.content.decode()
    assert TableConfig.objects.count() == 1


def test_the_form_refuses_what_the_jurisdiction_forbids(login, table):
    v1 = table.current_config()
    data = form_data(v1) | {
        "special_21+3": "",
        "special_top_21+3": "default",
        "rule_max_splits": "4",
        "timer_decision": "26",
    }
    response = login("floor_manager").post(config_url(v1), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "special bets: top_21+3 cannot be enabled without 21+3 (seed 001 §5.5)" in html
    assert "rules: max_splits 4: Washington State tribal casinos" in html
    assert "longest timer of 25 s" in html
    assert TableConfig.objects.count() == 1


def test_a_first_configuration_is_added_for_a_new_table(login, jurisdictions, table):
    new = Table.objects.create(name="WA 2", jurisdiction=jurisdictions["wa-tribal"])
    data = form_data(table=new) | {"table": str(new.pk), "special_lucky_ladies": "default"}
    response = login("floor_manager").post("/admin/tablehub/tableconfig/add/", data)
    assert response.status_code == 302
    config = new.current_config()
    assert config.version == 1 and set(config.special_bets) == {"lucky_ladies"}
    assert config.limits == {"main": ["1", "100"]}


def test_floor_manager_reads_but_may_not_change_jurisdictions(login, jurisdictions):
    wa = jurisdictions["wa-tribal"]
    client = login("floor_manager")
    page = client.get(f"/admin/tablehub/jurisdiction/{wa.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.post(f"/admin/tablehub/jurisdiction/{wa.pk}/change/", {}).status_code == 403
    assert client.get("/admin/tablehub/jurisdiction/add/").status_code == 403


def test_superuser_changes_a_jurisdiction_and_the_history_says_who(login, jurisdictions):
    wa = jurisdictions["wa-tribal"]
    client = login("superuser")
    page = client.get(f"/admin/tablehub/jurisdiction/{wa.pk}/change/")
    assert page.status_code == 200
    data = jurisdiction_form(
        wa,
        blackjack_pays=["3:2"],
        min_rtp="0.75",
        max_decision_seconds="20",
        dispute_window_seconds="30",
    )
    response = client.post(f"/admin/tablehub/jurisdiction/{wa.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    wa.refresh_from_db()
    assert (wa.blackjack_pays, wa.max_decision_seconds, wa.min_rtp) == (
        ["3:2"],
        20,
        Decimal("0.7500"),
    )
    record = wa.history.get()  # loaddata writes no history: this change is the first record
    assert (record.history_type, record.history_user.username) == ("~", "root")
    assert (record.blackjack_pays, record.min_rtp) == (["3:2"], Decimal("0.7500"))
    history = login("auditor").get(f"/admin/tablehub/jurisdiction/{wa.pk}/history/")
    assert history.status_code == 200 and "root" in history.content.decode()


def test_the_jurisdiction_form_refuses_a_change_that_breaks_a_table(login, table):
    wa = table.jurisdiction
    url = f"/admin/tablehub/jurisdiction/{wa.pk}/change/"
    client = login("superuser")
    response = client.post(url, jurisdiction_form(wa, max_splits="1"))  # the table splits 3
    assert response.status_code == 200
    html = response.content.decode()
    assert "This change would break the current configuration of a table" in html
    assert "table WA 1 (configuration v1): max_splits 3: " in html
    assert "allows at most 1" in html
    # A field error too: both are shown, as when the model's clean ran the table check.
    response = client.post(url, jurisdiction_form(wa, max_splits="1", min_rtp="2"))
    html = response.content.decode()
    assert "Ensure this value is less than or equal to 1." in html
    assert "This change would break the current configuration of a table" in html
    wa.refresh_from_db()
    assert (wa.max_splits, wa.min_rtp) == (3, None)  # nothing changed


def test_auditor_reads_everything_and_changes_nothing(login, table):
    s1 = table.stations.get(name="s1")
    round = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    client = login("auditor")
    config = table.current_config()
    page = client.get(config_url(config))
    html = page.content.decode()
    assert page.status_code == 200 and 'name="_save"' not in html and "96.2961%" in html
    assert client.post(config_url(config), form_data(config)).status_code == 403
    assert client.get("/admin/tablehub/tableconfig/add/").status_code == 403
    assert client.get("/admin/tablehub/table/add/").status_code == 403
    for url in (
        "/admin/tablehub/table/",
        "/admin/rounds/round/",
        "/admin/payouts/ledgerentry/",
        "/admin/stations/station/",
        "/admin/payouts/paytable/",
        f"/admin/tablehub/tableconfig/{config.pk}/history/",
    ):
        assert client.get(url).status_code == 200, url
    recall = client.get(f"/admin/rounds/round/{round.pk}/change/").content.decode()
    assert "Game recall" in recall and "dealer_up" in recall and "hole" in recall
    assert "TS 9D" in recall and "house result -10.00" in recall  # 19 beats the dealer's 17


def test_rounds_and_the_ledger_are_read_only_even_for_a_superuser(login, table):
    s1 = table.stations.get(name="s1")
    round = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    client = login("superuser")
    assert client.post(f"/admin/rounds/round/{round.pk}/change/", {}).status_code == 403
    assert client.get(f"/admin/rounds/round/{round.pk}/delete/").status_code == 403
    assert client.get("/admin/payouts/ledgerentry/add/").status_code == 403


@pytest.mark.parametrize("role", ["dealer", "supervisor"])
def test_dealers_and_supervisors_do_not_reach_the_admin(login, role):
    response = login(role).get("/admin/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_floor_manager_exports_a_report_from_the_table_list(login, table):
    s1 = table.stations.get(name="s1")
    play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    response = login("floor_manager").post(
        "/admin/tablehub/table/",
        {"action": "report_last_day", "_selected_action": [str(table.pk)]},
    )
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("table,start,end,bet,rounds,bets,drop,paid,win,hold_pct")
    main = lines[1].split(",")
    assert main[0] == "WA 1" and main[3:9] == ["main", "1", "1", "10.00", "20.00", "-10.00"]


def test_stations_are_added_with_a_hashed_credential(login, table):
    client = login("floor_manager")
    response = client.post(
        "/admin/stations/station/add/",
        {"table": str(table.pk), "name": "s3", "is_active": "on", "new_credential": "secret-s3"},
    )
    assert response.status_code == 302
    station = table.stations.get(name="s3")
    assert station.check_credential("secret-s3") and "secret-s3" not in station.credential
    assert station.history.get().history_user.username == "fm"
    assert Jurisdiction.objects.count() == 2


def test_a_floor_manager_sets_a_stations_language(login, table):
    """Issue 19, point 6: the station's page speaks the language set here, whatever the
    player's browser asks; empty gives the choice back to the browser."""
    client = login("floor_manager")
    s1 = table.stations.get(name="s1")
    change = f"/admin/stations/station/{s1.pk}/change/"
    fields = {"table": str(table.pk), "name": "s1", "is_active": "on"}
    assert client.post(change, {**fields, "language": "es"}).status_code == 302
    s1.refresh_from_db()
    assert s1.language == "es" and s1.history.first().language == "es"  # audited
    page = client.get(f"/tables/{table.pk}/stations/s1/", HTTP_ACCEPT_LANGUAGE="en").content
    assert '<html lang="es">' in page.decode() and "Créditos jugables" in page.decode()
    assert client.post(change, {**fields, "language": "fr"}).status_code == 200  # not offered
    assert client.post(change, {**fields, "language": ""}).status_code == 302
    page = client.get(f"/tables/{table.pk}/stations/s1/", HTTP_ACCEPT_LANGUAGE="en").content
    assert '<html lang="en">' in page.decode()


def test_the_add_page_starts_from_the_tables_current_configuration(login, table):
    page = login("floor_manager").get(f"/admin/tablehub/tableconfig/add/?table={table.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="timer_decision" value="15"' in html and 'name="main_max" value="100"' in html


def test_paytables_show_their_par_sheet(login, run_command):
    from payouts.models import Paytable

    assert run_command("loaddata", "default_paytables")[0] == 0
    sweet = Paytable.objects.get(bet_code="sweet_16", is_default=True)
    client = login("auditor")
    assert "95.1807%" in client.get("/admin/payouts/paytable/").content.decode()
    page = client.get(f"/admin/payouts/paytable/{sweet.pk}/change/").content.decode()
    assert "8 decks: RTP 95.1807%, hit frequency 7.6923%" in page
    assert "0.00074143" in page  # the sweet 16 line of seed 003's paytable


def test_only_those_who_change_jurisdictions_move_a_table_to_another(login, table, jurisdictions):
    other = jurisdictions["sweet16-hitsquad"]
    data = {
        "name": "WA 1",
        "jurisdiction": str(other.pk),
        "boxes": "3",
        "shuffler": "continuous",
        "currency": "USD",
        "mode": "dealer",
        "configs-TOTAL_FORMS": "0",
        "configs-INITIAL_FORMS": "0",
    }
    url = f"/admin/tablehub/table/{table.pk}/change/"
    assert login("floor_manager").post(url, data).status_code == 302
    table.refresh_from_db()
    assert table.jurisdiction.code == "wa-tribal"  # read-only for a floor manager
    assert login("superuser").post(url, data).status_code == 302
    table.refresh_from_db()
    assert table.jurisdiction == other


def test_the_admin_refuses_to_tighten_a_jurisdiction_under_a_table(login, table):
    wa = table.jurisdiction
    data = jurisdiction_form(wa, max_splits="1")  # the table splits to 4 hands
    response = login("superuser").post(f"/admin/tablehub/jurisdiction/{wa.pk}/change/", data)
    assert response.status_code == 200  # the form again, with the reason
    assert "table WA 1 (configuration v1)" in response.content.decode()
    wa.refresh_from_db()
    assert (wa.max_splits, wa.blackjack_pays) == (3, ["3:2", "6:5", "1:1"])


def test_a_special_bet_gets_limits_of_its_own_in_the_form(login, table):
    v1 = table.current_config()
    data = form_data(v1) | {"limit_pair_min": "2", "limit_pair_max": "10"}
    response = login("floor_manager").post(config_url(v1), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    v2 = table.current_config()
    assert v2.limits == {"main": ["1", "100"], "special": ["1", "25"], "pair": ["2", "10"]}
    page = login("floor_manager").get(config_url(v2)).content.decode()
    (field,) = re.findall(r'<input[^>]*name="limit_pair_max"[^>]*>', page)
    assert re.search(r'value="10(\.00)?"', field)  # shown again for the next change


def test_a_floor_manager_sets_up_a_stadium_and_puts_a_table_and_a_station_in_it(login, table):
    """Issue 22, point 5: stadiums in the admin; a station's stadium must be its table's."""
    from tablehub.models import Stadium

    client = login("floor_manager")
    inline = {"tables-TOTAL_FORMS": "0", "tables-INITIAL_FORMS": "0"}  # the tables listed
    response = client.post("/admin/tablehub/stadium/add/", {"name": "Main floor", **inline})
    assert response.status_code == 302
    stadium = Stadium.objects.get(name="Main floor")
    s1 = table.stations.get(name="s1")
    change = f"/admin/stations/station/{s1.pk}/change/"
    fields = {"table": str(table.pk), "name": "s1", "is_active": "on", "stadium": stadium.pk}
    refused = client.post(change, fields)  # its table is in no stadium yet
    assert (
        refused.status_code == 200 and "must be a table of its stadium" in refused.content.decode()
    )
    s1.refresh_from_db()
    assert s1.stadium is None
    Table.objects.filter(pk=table.pk).update(stadium=stadium)  # the table's page, field "stadium"
    assert client.post(change, fields).status_code == 302
    s1.refresh_from_db()
    assert s1.stadium == stadium
    page = client.get(f"/admin/tablehub/stadium/{stadium.pk}/change/").content.decode()
    assert table.name in page
    auditor = login("auditor")
    assert auditor.get("/admin/tablehub/stadium/").status_code == 200
    refused = auditor.post("/admin/tablehub/stadium/add/", {"name": "Other", **inline})
    assert refused.status_code == 403
