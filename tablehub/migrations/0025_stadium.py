"""Stadiums (issue 22, point 5): a stadium groups tables whose stations move among them;
floor managers set them up in the admin, auditors read them."""

import django.db.models.deletion
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

ROLE_PERMISSIONS = {
    "floor_manager": [
        ("tablehub", f"{action}_stadium") for action in ("add", "change", "delete", "view")
    ],
    "auditor": [("tablehub", "view_stadium")],
}


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
        ('tablehub', '0024_seat_mode'),
    ]

    operations = [
        migrations.CreateModel(
            name='Stadium',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=80, unique=True)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.AddField(
            model_name='historicaltable',
            name='stadium',
            field=models.ForeignKey(blank=True, db_constraint=False, help_text='the stadium whose stations may move to this table (empty: none)', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='tablehub.stadium'),
        ),
        migrations.AddField(
            model_name='table',
            name='stadium',
            field=models.ForeignKey(blank=True, help_text='the stadium whose stations may move to this table (empty: none)', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='tables', to='tablehub.stadium'),
        ),        migrations.RunPython(assign, unassign),
    ]
