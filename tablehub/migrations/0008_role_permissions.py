"""The staff roles' model permissions (docs/operations.md, "Roles").

Dealers and supervisors get none (they are not staff and never use the admin); floor
managers configure tables, stations and paytables, read everything else and unlock a
locked-out login (delete its axes access attempt); auditors read everything, the login
attempts included. Jurisdictions are changed only by superusers or by a user given the
``tablehub.change_jurisdiction`` permission on their own.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

READ = {
    "tablehub": ["jurisdiction", "table", "tableconfig", "shoe", "report"],
    "stations": ["station", "playersession"],
    "rounds": ["round", "roundevent", "bet", "hand"],
    "payouts": ["paytable", "ledgerentry"],
    "axes": ["accessattempt", "accesslog"],
}
FLOOR_MANAGER_WRITES = {
    "tablehub": ["table", "tableconfig", "report"],
    "stations": ["station"],
    "payouts": ["paytable"],
}
EXTRA = [("tablehub", "view_reports")]


def codenames(writes):
    out = [(app, f"view_{model}") for app, models in READ.items() for model in models]
    for app, models in writes.items():
        out += [(app, f"{action}_{model}") for model in models for action in ("add", "change")]
    return out + EXTRA


ROLE_PERMISSIONS = {
    "dealer": [],
    "supervisor": [],
    "floor_manager": codenames(FLOOR_MANAGER_WRITES) + [("axes", "delete_accessattempt")],
    "auditor": codenames({}),
}


def assign(apps, schema_editor):
    # Permissions are normally created after migrate; create them now so they can be given.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = [
            Permission.objects.get(content_type__app_label=app, codename=codename)
            for app, codename in perms
        ]
        group.permissions.set(wanted)


def unassign(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for group in Group.objects.filter(name__in=ROLE_PERMISSIONS):
        group.permissions.clear()


class Migration(migrations.Migration):
    dependencies = [
        ("tablehub", "0007_jurisdiction_rules_history_reports"),
        ("stations", "0004_historicalstation"),
        ("payouts", "0004_historicalpaytable"),
        ("rounds", "0002_round_step_key"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("axes", "0010_accessattemptexpiration"),
    ]

    operations = [migrations.RunPython(assign, unassign)]
