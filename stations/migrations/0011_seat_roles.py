"""Floor managers see the seats of seat-mode tables and free one whose player went away
(the admin's action, through stations/seats.py); auditors see them."""

from django.db import migrations

from tablehub.roles import granting

ROLE_PERMISSIONS = {
    "floor_manager": [("stations", "view_tableseat"), ("stations", "delete_tableseat")],
    "auditor": [("stations", "view_tableseat")],
}

assign, unassign = granting(ROLE_PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("stations", "0010_station_stadium"),
        ("tablehub", "0025_stadium"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
