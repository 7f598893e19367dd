"""Floor managers and auditors read the statistics per dealer and shift and the log of
dealer changes (issue 21, point 5; docs/integrity.md), in the admin and the API; nobody
changes them there."""

from django.db import migrations

from tablehub.roles import granting

READ = [
    ("tablehub", "view_dealerreport"),
    ("croupier", "view_dealerchange"),
]
ROLE_PERMISSIONS = {"floor_manager": READ, "auditor": READ}


assign, unassign = granting(ROLE_PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("tablehub", "0019_dealer_on_duty_and_statistics"),
        ("croupier", "0002_dealer_change"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
