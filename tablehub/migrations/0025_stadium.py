"""Stadiums (issue 22, point 5): a stadium groups tables whose stations move among them;
floor managers set them up in the admin, auditors read them."""

import django.db.models.deletion
from django.db import migrations, models

from tablehub.roles import granting

ROLE_PERMISSIONS = {
    "floor_manager": [
        ("tablehub", f"{action}_stadium") for action in ("add", "change", "delete", "view")
    ],
    "auditor": [("tablehub", "view_stadium")],
}


assign, unassign = granting(ROLE_PERMISSIONS)


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
