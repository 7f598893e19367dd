"""Round numbers per table (issue 19): Round 1, 2, ... at each table, beside the id that
counts across tables. Existing rounds are numbered in the order they were opened."""

from django.db import migrations, models


def number_existing_rounds(apps, schema_editor):
    Round = apps.get_model("rounds", "Round")
    counts: dict[int, int] = {}
    for round in Round.objects.order_by("pk").only("pk", "table_id").iterator():
        counts[round.table_id] = counts.get(round.table_id, 0) + 1
        Round.objects.filter(pk=round.pk).update(number=counts[round.table_id])


class Migration(migrations.Migration):
    dependencies = [
        ("rounds", "0006_event_kept"),
        ("tablehub", "0010_table_is_replay"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="number",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.RunPython(number_existing_rounds, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="round",
            name="number",
            field=models.PositiveIntegerField(
                help_text="the round's number at its table: 1, 2, ... (the id counts across tables)"
            ),
        ),
        migrations.AddConstraint(
            model_name="round",
            constraint=models.UniqueConstraint(
                fields=("table", "number"), name="one_number_per_table_round"
            ),
        ),
    ]
