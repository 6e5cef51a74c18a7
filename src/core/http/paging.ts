// The paging parameters of list routes, one definition for all: an offset is a row count the
// database can take (a 32-bit integer), a cursor a row id it can compare (a safe integer), so a
// huge or odd value is a 400 naming the parameter, never a 500 from the statement.

import { Type } from 'typebox';

/** The largest `offset` any list route takes: PostgreSQL's 32-bit integer. */
export const MAX_OFFSET = 2_147_483_647;

/** `offset` of a list route: rows to skip, 0 … MAX_OFFSET. */
export const offsetParam = (description = 'Rows to skip; default 0.') =>
  Type.Integer({ minimum: 0, maximum: MAX_OFFSET, description });

/** `cursor` of a list route: the id of the last row seen (a positive safe integer). */
export const cursorParam = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
