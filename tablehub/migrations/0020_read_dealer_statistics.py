"""Floor managers and auditors read the statistics per dealer and shift and the log of
dealer changes (issue 21, point 5; docs/integrity.md), in the admin and the API; nobody
changes them there."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

READ = [
    ("tablehub", "view_dealerreport"),
    ("croupier", "view_dealerchange"),
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
        ("tablehub", "0019_dealer_on_duty_and_statistics"),
        ("croupier", "0002_dealer_change"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
