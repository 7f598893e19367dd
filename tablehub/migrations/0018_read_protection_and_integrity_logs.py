"""Floor managers and auditors read the logs added since the roles' permissions were set
(tablehub/0008_role_permissions): the player-protection log (issue 20: "the floor-manager
API and admin list ... reality checks, limits, breaks, hands completed automatically"),
the card-conservation alerts and the program-authentication checks (issue 21)."""

from django.db import migrations

from tablehub.roles import granting

READ = [
    ("stations", "view_protectionevent"),
    ("croupier", "view_cardalert"),
    ("tablehub", "view_installcheck"),
]
ROLE_PERMISSIONS = {"floor_manager": READ, "auditor": READ}


assign, unassign = granting(ROLE_PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("tablehub", "0017_jurisdiction_recall_games"),
        ("stations", "0007_station_breaks_inactivity"),
        ("croupier", "0001_card_alert"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
