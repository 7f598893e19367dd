"""Each station's credits kept in one row (StationCredits), filled here from the sum of its
entries; an index for a station's entries from one on."""

from decimal import Decimal

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Sum


def credits_from_entries(apps, schema_editor):
    """Every station with entries gets its row: the sum of its entries, in cents (SQLite's
    sum may come back as a float: read through its text, as payouts.ledger.money does)."""
    LedgerEntry = apps.get_model("payouts", "LedgerEntry")
    StationCredits = apps.get_model("payouts", "StationCredits")
    sums = (
        LedgerEntry.objects.filter(station__isnull=False)
        .values_list("station_id")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    StationCredits.objects.bulk_create(
        StationCredits(
            station_id=station_id,
            cents=int(Decimal(str(total)).quantize(Decimal("0.01")) * 100),
        )
        for station_id, total in sums
    )


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0009_ledger_move"),
        ("rounds", "0010_json_bulk_inserts_as_rows"),
        ("stations", "0012_json_bulk_inserts_as_rows"),
        ("tablehub", "0025_stadium"),
    ]

    operations = [
        migrations.CreateModel(
            name="StationCredits",
            fields=[
                (
                    "station",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="stations.station",
                    ),
                ),
                ("cents", models.BigIntegerField(default=0)),
            ],
            options={
                "verbose_name_plural": "station credits",
            },
        ),
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(fields=["station", "id"], name="ledger_station_since"),
        ),
        migrations.RunPython(credits_from_entries, migrations.RunPython.noop),
    ]
