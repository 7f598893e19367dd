"""Odd input the API once answered with a 500 (issue 17, finding 10): numbers in digits
that are not ASCII (``7³``) and date-time offsets PostgreSQL cannot store (``-21:55``)."""

import pytest

from tablehub.models import Report


@pytest.mark.parametrize("digits", ["7³", "٣", "①", "7\u0663"])
def test_a_version_or_table_in_non_ascii_digits_is_a_400(api, users, table, digits):
    for url, name in (
        (f"/api/tables/{table.pk}/parsheets/?version={digits}", "version"),
        (f"/api/stations/?table={digits}", "table"),
    ):
        response = api(users["superuser"], "get", url)
        assert response.status_code == 400, (url, response.content)
        assert response.json()["error"]["message"].startswith(f"{name} must be")


@pytest.mark.parametrize(
    "start, end, stored",
    [
        # -21:55 is 21 hours 55 minutes behind UTC: stored in UTC, the day after.
        ("2025-01-01T00:00:00Z", "2025-01-01T02:00:00-21:55", "2025-01-01T23:55:00+00:00"),
        ("2025-01-01T00:00:00+23:59", "2025-01-02T00:00:00Z", "2024-12-31T00:01:00+00:00"),
    ],
)
def test_a_report_job_with_a_far_offset_is_stored_in_utc(api, users, table, start, end, stored):
    response = api(
        users["superuser"], "post", f"/api/tables/{table.pk}/reports/", {"start": start, "end": end}
    )
    assert response.status_code == 202, response.content
    job = Report.objects.get(pk=response.json()["id"])
    assert stored in (job.start.isoformat(), job.end.isoformat())


@pytest.mark.parametrize(
    "start",
    ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"],
)
def test_a_date_time_that_leaves_the_calendar_in_utc_is_a_400(api, users, table, start):
    body = {"start": start, "end": "2025-01-01T00:00:00Z"}
    response = api(users["superuser"], "post", f"/api/tables/{table.pk}/reports/", body)
    assert response.status_code == 400, response.content
    assert Report.objects.count() == 0
