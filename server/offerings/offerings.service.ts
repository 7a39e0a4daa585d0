// Offering actions. Every read and write goes through the tenant-scoped client.
import type { Prisma } from "../db/generated/client";
import type { TenantDb, TenantSql } from "../db/tenant-scope";
import { lockTenantRow } from "../db/lock-row";
import { changedFields, dateFromWire, dateToWire, decimalToWire, mergeAttributes, pickColumns } from "../shared/wire";
import { isoText, sqlKeysetPage, sqlList, toListEnvelope } from "../shared/pagination";
import { notFound } from "../shared/errors";
import { eventEmitter } from "../outbox/emit-event";
import { OFFERING_EVENTS } from "./offerings.events";
import type { CreateOfferingInput, Offering, UpdateOfferingInput } from "./offerings.types";

const emitEvent = eventEmitter(OFFERING_EVENTS);

type OfferingRow = Prisma.OfferingGetPayload<object>;

export function offeringToWire(o: OfferingRow): Offering {
  return {
    id: o.id,
    external_id: o.externalId,
    reference_number: o.referenceNumber,
    title: o.title,
    title_ar: o.titleAr,
    description: o.description,
    description_ar: o.descriptionAr,
    attributes: (o.attributes ?? {}) as Record<string, unknown>,
    price: decimalToWire(o.price),
    price_currency: o.priceCurrency,
    address: o.address,
    photos: o.photos,
    status: o.status,
    available_from: dateToWire(o.availableFrom),
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}

/** Wire field -> column, for the fields a create or update may set directly. */
const COLUMNS = {
  external_id: "externalId",
  reference_number: "referenceNumber",
  title: "title",
  title_ar: "titleAr",
  description: "description",
  description_ar: "descriptionAr",
  price: "price",
  price_currency: "priceCurrency",
  address: "address",
  photos: "photos",
  status: "status",
} as const;

function toColumns(input: Partial<CreateOfferingInput>): Record<string, unknown> {
  const data = pickColumns(input, COLUMNS);
  if (input.available_from !== undefined) data.availableFrom = input.available_from === null ? null : dateFromWire(input.available_from);
  return data;
}

/** An offering row (`t`) as its wire shape, in SQL: what `offeringToWire` answers, formatted by PostgreSQL. */
export const OFFERING_WIRE_SELECT = `t.id, t.external_id, t.reference_number, t.title, t.title_ar, t.description, t.description_ar,
    t.attributes, trim_scale(t.price)::text AS price, t.price_currency, t.address, t.photos, t.status,
    to_char(t.available_from, 'YYYY-MM-DD') AS available_from, ${isoText("created_at")} AS created_at, ${isoText("updated_at")} AS updated_at`;

/** The list, in prepared SQL answering wire-shaped rows (it is the API's hottest read). */
const OFFERINGS_LIST = sqlList({
  table: "offerings",
  select: OFFERING_WIRE_SELECT,
  sortColumn: "created_at",
  direction: "desc",
  where: "t.deleted_at IS NULL",
});

export async function listOfferings(sql: TenantSql, input: { limit?: number; cursor?: string }) {
  return toListEnvelope(await sqlKeysetPage<Offering>(sql, OFFERINGS_LIST, input), (row) => row);
}

export async function createOffering(db: TenantDb, input: CreateOfferingInput): Promise<Offering> {
  return db.$transaction(async (tx) => {
    const row = await tx.offering.create({
      data: { ...toColumns(input), attributes: mergeAttributes({}, input.attributes ?? {}) } as never,
    });
    const offering = offeringToWire(row);
    await emitEvent(tx, "offering.created", { object: offering });
    return offering;
  });
}

export async function updateOffering(db: TenantDb, tenantId: string, input: UpdateOfferingInput): Promise<Offering> {
  const { id, attributes, ...rest } = input;
  return db.$transaction(async (tx) => {
    if (!(await lockTenantRow(tx, "offerings", tenantId, id))) throw notFound();
    const before = await tx.offering.findFirst({ where: { id, deletedAt: null } });
    if (!before) throw notFound();
    const data = toColumns(rest);
    if (attributes !== undefined) data.attributes = mergeAttributes(before.attributes, attributes);
    const after = await tx.offering.update({ where: { id }, data: data as never });
    const previous = offeringToWire(before);
    const offering = offeringToWire(after);
    await emitEvent(tx, "offering.updated", { object: offering, previous_attributes: changedFields(previous, offering) });
    return offering;
  });
}
