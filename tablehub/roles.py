"""The table's staff roles as Django groups: who may run a table, approve, configure, read.

Dealers and supervisors work from the croupier tablet and never reach the admin (they are
not staff); floor managers configure tables in the admin; auditors read the game recall.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.management import create_permissions

DEALER = "dealer"
SUPERVISOR = "supervisor"
FLOOR_MANAGER = "floor_manager"
AUDITOR = "auditor"
ROLES = (DEALER, SUPERVISOR, FLOOR_MANAGER, AUDITOR)

# Who may work the croupier tablet, and who may approve its supervisor actions.
TABLET_ROLES = (DEALER, SUPERVISOR, FLOOR_MANAGER)
APPROVER_ROLES = (SUPERVISOR, FLOOR_MANAGER)


def has_role(user, roles: tuple[str, ...]) -> bool:
    """True when ``user`` is active and in one of ``roles`` (superusers are in every role)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name__in=roles).exists()


def works_table(user, table) -> bool:
    """True when ``user`` may work ``table`` from the croupier tablet: a tablet role, and
    either a role that sees every table (floor managers, superusers: ``view_table``) or a
    place in the table's staff (dealers and supervisors), the same rule as the API's."""
    if not has_role(user, TABLET_ROLES):
        return False
    return user.has_perm("tablehub.view_table") or table.staff.filter(pk=user.pk).exists()


Grants = dict[str, list[tuple[str, str]]]  # role -> (app label, permission codename)
MigrationStep = Callable[[Any, Any], None]


def granting(grants: Grants) -> tuple[MigrationStep, MigrationStep]:
    """A data migration's two steps for ``grants``: add those permissions to the role groups
    (creating the permissions first: Django makes them only after ``migrate``), and take
    them away again. The migrations after 0008 that widen a role call this."""

    def assign(apps: Any, schema_editor: Any) -> None:
        for app_config in apps.get_app_configs():
            app_config.models_module = True
            create_permissions(app_config, apps=apps, verbosity=0)
            app_config.models_module = None
        group_model = apps.get_model("auth", "Group")
        permission_model = apps.get_model("auth", "Permission")
        for role, perms in grants.items():
            group, _ = group_model.objects.get_or_create(name=role)
            group.permissions.add(
                *[
                    permission_model.objects.get(content_type__app_label=app, codename=codename)
                    for app, codename in perms
                ]
            )

    def unassign(apps: Any, schema_editor: Any) -> None:
        group_model = apps.get_model("auth", "Group")
        permission_model = apps.get_model("auth", "Permission")
        for role, perms in grants.items():
            for group in group_model.objects.filter(name=role):
                group.permissions.remove(
                    *permission_model.objects.filter(
                        content_type__app_label__in=[app for app, _ in perms],
                        codename__in=[codename for _, codename in perms],
                    )
                )

    return assign, unassign
