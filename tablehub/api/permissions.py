"""Who may call what: model permissions of the staff roles (tablehub/migrations/0008).

Auditors read everything and change nothing; floor managers also add configuration
versions; dealers and supervisors only read the status of the tables they work
(``Table.staff``); superusers do everything.
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from tablehub import roles


def needs(*perms: str) -> type[BasePermission]:
    """A permission class: the user must be authenticated and hold every one of ``perms``."""

    class Needs(BasePermission):
        message = "your role may not do this: it needs " + ", ".join(perms)

        def has_permission(self, request, view) -> bool:
            user = request.user
            return bool(user and user.is_authenticated and user.has_perms(perms))

    Needs.__name__ = "Needs_" + "_".join(p.replace(".", "_") for p in perms)
    return Needs


def may_see_table(user, table) -> bool:
    """Anyone who may view tables, or a dealer or supervisor of this table."""
    if user.has_perm("tablehub.view_table"):
        return True
    return roles.has_role(user, roles.TABLET_ROLES) and table.staff.filter(pk=user.pk).exists()


class SeesTables(BasePermission):
    message = "your role may not see tables"

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return user.has_perm("tablehub.view_table") or roles.has_role(user, roles.TABLET_ROLES)
