"""Floor managers and auditors read the logs added since the roles' permissions were set
(tablehub/0008_role_permissions): the player-protection log (issue 20: "the floor-manager
API and admin list ... reality checks, limits, breaks, hands completed automatically"),
the card-conservation alerts and the program-authentication checks (issue 21)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

READ = [
    ("stations", "view_protectionevent"),
    ("croupier", "view_cardalert"),
    ("tablehub", "view_installcheck"),
]
ROLE_PERMISSIONS = {"floor_manager": READ, "auditor": READ}


def assign(apps, schema_editor):
    for app_config in apps.get_app_configs():  # as in 0008: the permissions exist now
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.add(
            *[
                Permission.objects.get(content_type__app_label=app, codename=codename)
                for app, codename in perms
            ]
        )


def unassign(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, perms in ROLE_PERMISSIONS.items():
        for group in Group.objects.filter(name=role):
            group.permissions.remove(
                *Permission.objects.filter(
                    content_type__app_label__in=[app for app, _ in perms],
                    codename__in=[codename for _, codename in perms],
                )
            )


class Migration(migrations.Migration):
    dependencies = [
        ("tablehub", "0017_jurisdiction_recall_games"),
        ("stations", "0007_station_breaks_inactivity"),
        ("croupier", "0001_card_alert"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
