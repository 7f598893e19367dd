"""The table's staff roles as Django groups: who may run a table, approve, configure, read.

Dealers and supervisors work from the croupier tablet and never reach the admin (they are
not staff); floor managers configure tables in the admin; auditors read the game recall.
"""

from __future__ import annotations

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
