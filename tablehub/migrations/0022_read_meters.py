"""Floor managers and auditors read the soft meters of the stations and tables (issue 21,
point 4) in the admin and the API; nobody changes them there (payouts/meters.py keeps
them)."""

from django.db import migrations

from tablehub.roles import granting

READ = [
    ("payouts", "view_stationmeter"),
    ("payouts", "view_tablemeter"),
]
ROLE_PERMISSIONS = {"floor_manager": READ, "auditor": READ}


assign, unassign = granting(ROLE_PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("tablehub", "0021_jurisdiction_tips_allowed"),
        ("payouts", "0008_meters_and_tips"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
