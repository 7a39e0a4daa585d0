// Offering actions. Every read and write goes through the tenant-scoped client.
import { Prisma } from "../db/generated/client";
import { modelColumns } from "../db/columns";
import type { TenantDb, TenantSql } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { changedFields, mergeAttributes } from "../lib/wire";
import { sqlKeysetPage, sqlList, toListEnvelope } from "../lib/pagination";
import { notFound } from "../lib/errors";
import { eventEmitter } from "../outbox/emit-event";
import { OFFERING_EVENTS } from "./offerings.events";
import { type CreateOfferingInput, type Offering, offeringResource, type UpdateOfferingInput } from "./offerings.types";

const emitEvent = eventEmitter(OFFERING_EVENTS);

const offeringToWire = offeringResource.toWire;

/** An offering row (`t`) as its wire shape, in SQL: what `offeringToWire` answers, formatted by PostgreSQL. */
export const OFFERING_WIRE_SELECT = offeringResource.sqlSelect;

const OFFERING = modelColumns(Prisma.OfferingScalarFieldEnum);

/** The list, in prepared SQL answering wire-shaped rows (it is the API's hottest read). */
const OFFERINGS_LIST = sqlList({
  table: "offerings",
  columns: OFFERING,
  select: OFFERING_WIRE_SELECT,
  sortField: "createdAt",
  direction: "desc",
  where: `t.${OFFERING.deletedAt} IS NULL`,
});

export async function listOfferings(sql: TenantSql, input: { limit?: number; cursor?: string }) {
  return toListEnvelope(await sqlKeysetPage<Offering>(sql, OFFERINGS_LIST, input), (row) => row);
}

/** One offering of the tenant; soft-deleted ones are gone, as from the list (404, like another tenant's). */
export async function getOffering(db: TenantDb, id: string): Promise<Offering> {
  const row = await db.offering.findFirst({ where: { id, deletedAt: null } });
  if (!row) throw notFound();
  return offeringToWire(row);
}

export async function createOffering(db: TenantDb, input: CreateOfferingInput): Promise<Offering> {
  return db.$transaction(async (tx) => {
    const row = await tx.offering.create({
      data: { ...offeringResource.patchToColumns(input), tenantId: tx.tenantId, attributes: mergeAttributes({}, input.attributes ?? {}) },
    });
    const offering = offeringToWire(row);
    await emitEvent(tx, "offering.created", { object: offering });
    return offering;
  });
}

export async function updateOffering(db: TenantDb, input: UpdateOfferingInput): Promise<Offering> {
  const { id, attributes, ...rest } = input;
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "Offering", id))) throw notFound();
    const before = await tx.offering.findFirst({ where: { id, deletedAt: null } });
    if (!before) throw notFound();
    const data: Prisma.OfferingUncheckedUpdateInput = offeringResource.patchToColumns(rest);
    if (attributes !== undefined) data.attributes = mergeAttributes(before.attributes, attributes);
    const after = await tx.offering.update({ where: { id }, data });
    const previous = offeringToWire(before);
    const offering = offeringToWire(after);
    await emitEvent(tx, "offering.updated", { object: offering, previous_attributes: changedFields(previous, offering) });
    return offering;
  });
}
