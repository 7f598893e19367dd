"""The soft meters of each station and table (payouts/meters.py) and the tip kind of the
ledger; the meters start as the ledger already written says (as ``ledger.check`` counts
them), so that ``check_ledger`` finds them equal from the start."""

from collections import Counter, defaultdict
from decimal import Decimal

import django.db.models.deletion
from django.db import migrations, models

# A ledger kind -> its meter and the sign that makes it count up (payouts/meters.py, KINDS).
KINDS = {
    "stake": ("total_wagered_cents", -1),
    "return": ("total_won_cents", 1),
    "cash_in": ("cash_in_cents", 1),
    "cash_out": ("cash_out_cents", -1),
    "refund": ("voided_stakes_cents", 1),
    "house_loss": ("house_losses_cents", 1),
    "tip": ("tips_cents", -1),
}


def count_the_ledger(apps, schema_editor):
    LedgerEntry = apps.get_model("payouts", "LedgerEntry")
    Round = apps.get_model("rounds", "Round")
    Station = apps.get_model("stations", "Station")
    StationMeter = apps.get_model("payouts", "StationMeter")
    TableMeter = apps.get_model("payouts", "TableMeter")
    counted = defaultdict(Counter)
    played = defaultdict(lambda: [Decimal(0), Decimal(0)])  # (round, station): stakes, net
    entries = LedgerEntry.objects.filter(station__isnull=False)
    # The kind of each refunded entry, by its refund's key (payouts.ledger: "<key>:void").
    refunded = {
        key + ":void": kind
        for key, kind in entries.filter(round__phase="void").values_list("key", "kind")
    }
    rows = entries.values_list("key", "station_id", "round_id", "kind", "amount")
    for key, station_id, round_id, kind, amount in rows.iterator():
        amount = Decimal(str(amount))
        if kind == "refund" and refunded.get(key) == "return":
            kind = "return"  # a void's refund of a return is taken off the returns
        column, sign = KINDS[kind]
        counted[station_id][column] += sign * int(amount * 100)
        if round_id is not None and kind in ("stake", "return"):
            played[(round_id, station_id)][0] += amount if kind == "stake" else 0
            played[(round_id, station_id)][1] += amount
    settled = set(Round.objects.filter(phase="settled").values_list("pk", flat=True))
    for (round_id, station_id), (stakes, net) in played.items():
        if round_id in settled and stakes < 0:
            counted[station_id]["games_played"] += 1
            counted[station_id]["games_won"] += net > 0
    tables = dict(Station.objects.filter(pk__in=counted).values_list("pk", "table_id"))
    by_table = defaultdict(Counter)
    for station_id, columns in counted.items():
        by_table[tables[station_id]].update(columns)
        StationMeter.objects.create(
            station_id=station_id, table_id=tables[station_id], **dict(columns)
        )
    for table_id, columns in by_table.items():
        TableMeter.objects.create(table_id=table_id, **dict(columns))


class Migration(migrations.Migration):

    dependencies = [
        ('payouts', '0007_ledger_chain'),
        ('rounds', '0007_round_number'),
        ('stations', '0007_station_breaks_inactivity'),
        ('tablehub', '0021_jurisdiction_tips_allowed'),
    ]

    operations = [
        migrations.CreateModel(
            name='TableMeter',
            fields=[
                ('total_wagered_cents', models.BigIntegerField(default=0, help_text='the stakes')),
                ('total_won_cents', models.BigIntegerField(default=0, help_text="the returns (a winning or pushed bet's stake and its win), less those a void took back")),
                ('games_played', models.BigIntegerField(default=0, help_text='settled rounds with a stake')),
                ('games_won', models.BigIntegerField(default=0, help_text='settled rounds whose returns were more than their stakes')),
                ('cash_in_cents', models.BigIntegerField(default=0)),
                ('cash_out_cents', models.BigIntegerField(default=0)),
                ('voided_stakes_cents', models.BigIntegerField(default=0, help_text='the stakes voids gave back')),
                ('tips_cents', models.BigIntegerField(default=0, help_text='tips to the dealer')),
                ('house_losses_cents', models.BigIntegerField(default=0, help_text="what voids and corrections took back beyond the credits (the house's loss)")),
                ('table', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='meter', serialize=False, to='tablehub.table')),
            ],
            options={
                'ordering': ['table'],
            },
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='kind',
            field=models.CharField(choices=[('cash_in', 'Cash In'), ('cash_out', 'Cash Out'), ('stake', 'Stake'), ('return', 'Return'), ('refund', 'Refund'), ('house_loss', 'House Loss'), ('tip', 'Tip')], max_length=16),
        ),
        migrations.CreateModel(
            name='StationMeter',
            fields=[
                ('total_wagered_cents', models.BigIntegerField(default=0, help_text='the stakes')),
                ('total_won_cents', models.BigIntegerField(default=0, help_text="the returns (a winning or pushed bet's stake and its win), less those a void took back")),
                ('games_played', models.BigIntegerField(default=0, help_text='settled rounds with a stake')),
                ('games_won', models.BigIntegerField(default=0, help_text='settled rounds whose returns were more than their stakes')),
                ('cash_in_cents', models.BigIntegerField(default=0)),
                ('cash_out_cents', models.BigIntegerField(default=0)),
                ('voided_stakes_cents', models.BigIntegerField(default=0, help_text='the stakes voids gave back')),
                ('tips_cents', models.BigIntegerField(default=0, help_text='tips to the dealer')),
                ('house_losses_cents', models.BigIntegerField(default=0, help_text="what voids and corrections took back beyond the credits (the house's loss)")),
                ('station', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='meter', serialize=False, to='stations.station')),
                ('table', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='station_meters', to='tablehub.table')),
            ],
            options={
                'ordering': ['table', 'station'],
            },
        ),
        migrations.RunPython(count_the_ledger, migrations.RunPython.noop),
    ]
