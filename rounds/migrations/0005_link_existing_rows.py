"""Link the rows written before the chains existed: each table's events and ledger entries in
the order they were written (by id), in the format of docs/integrity.md (rounds/chain.py)."""

from django.db import migrations

from rounds.chain import GENESIS, canonical_entry, canonical_event, link


def link_existing_rows(apps, schema_editor):
    RoundEvent = apps.get_model("rounds", "RoundEvent")
    LedgerEntry = apps.get_model("payouts", "LedgerEntry")
    ChainHead = apps.get_model("rounds", "ChainHead")
    Station = apps.get_model("stations", "Station")
    heads: dict[tuple[int, str], tuple[int, str]] = {}

    def extend(table_id, chain, content):
        position, last = heads.get((table_id, chain), (0, GENESIS))
        heads[(table_id, chain)] = (position + 1, link(last, content))
        return heads[(table_id, chain)]

    for event in RoundEvent.objects.select_related("round").order_by("pk").iterator():
        table_id = event.round.table_id
        content = canonical_event(
            table_id, event.round_id, event.seq, event.kind, event.payload, event.created_at
        )
        event.chain_pos, event.chain_link = extend(table_id, "events", content)
        event.save(update_fields=["chain_pos", "chain_link"])
    station_tables = dict(Station.objects.values_list("pk", "table_id"))
    by_key: dict[str, int] = {}
    for entry in LedgerEntry.objects.select_related("round").order_by("pk").iterator():
        if entry.round_id is not None:
            table_id = entry.round.table_id
        elif entry.station_id is not None:
            table_id = station_tables[entry.station_id]
        else:  # a cash movement's house side: its station side's table
            table_id = by_key.get(entry.key.removesuffix("|house"))
            if table_id is None:
                side = LedgerEntry.objects.filter(key=entry.key.removesuffix("|house")).first()
                table_id = station_tables[side.station_id]
        by_key[entry.key] = table_id
        content = canonical_entry(
            table_id,
            entry.round_id,
            entry.station_id,
            entry.kind,
            entry.amount,
            entry.key,
            entry.created_at,
        )
        entry.table_id = table_id
        entry.chain_pos, entry.chain_link = extend(table_id, "ledger", content)
        entry.save(update_fields=["table", "chain_pos", "chain_link"])
    ChainHead.objects.bulk_create(
        ChainHead(table_id=table_id, chain=chain, position=position, link=last)
        for (table_id, chain), (position, last) in sorted(heads.items())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("rounds", "0004_tamper_evident_chain"),
        ("payouts", "0007_ledger_chain"),
    ]

    operations = [migrations.RunPython(link_existing_rows, migrations.RunPython.noop)]
