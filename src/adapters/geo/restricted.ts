// The default restricted list: where Polymarket's API refuses new orders.
//
// Source: Polymarket, "Geographic Restrictions", https://docs.polymarket.com/api-reference/geoblock
// (consulted 2026-11-26). The page sorts jurisdictions into three groups:
// - "OFAC-Sanctioned Jurisdictions (Block Completely)", frontend and API: IR, SY, CU, KP, and the
//   Ukrainian regions Crimea (UA-43), Donetsk (UA-14) and Luhansk (UA-09);
// - "Regulatory-Restricted Jurisdictions (Close-Only on Frontend and API)": existing positions
//   may be closed, no new ones opened;
// - "Regulatory-Restricted Jurisdictions (Close-Only on Frontend)": IE, JP, MT (sports only), NL,
//   KR, where "the API itself is not restricted". Purser trades through the API, so these are
//   not in the default list.
//
// The gate judges countries, not regions: the sub-national entries (UA-43, UA-14, UA-09 and the
// Canadian provinces CA-BC, CA-ON, CA-AB, CA-QC) cannot be told apart from the rest of UA and CA
// by a country code, and are listed in DEFAULT_RESTRICTED_REGIONS for the record only. An
// operator who must block them adds UA or CA to the restricted countries (blocking the whole
// country) or blocks the regions at the edge. The list changes; operators should check the page.

/** ISO 3166-1 alpha-2 codes of the countries whose clients Polymarket's API refuses new orders. */
export const DEFAULT_RESTRICTED_COUNTRIES: readonly string[] = Object.freeze([
  // OFAC-sanctioned, blocked completely
  'CU',
  'IR',
  'KP',
  'SY',
  // Close-only on frontend and API
  'AU',
  'BE',
  'BI',
  'BR',
  'BY',
  'CD',
  'CF',
  'DE',
  'ET',
  'FR',
  'GB',
  'IQ',
  'IT',
  'LB',
  'LY',
  'MM',
  'NI',
  'NZ',
  'PL',
  'RU',
  'SD',
  'SG',
  'SK',
  'SO',
  'SS',
  'TH',
  'TW',
  'UM',
  'US',
  'VE',
  'YE',
  'ZW',
]);

/** ISO 3166-2 regions on the same page, which a country-level gate cannot enforce (see above). */
export const DEFAULT_RESTRICTED_REGIONS: readonly string[] = Object.freeze([
  'UA-43',
  'UA-14',
  'UA-09',
  'CA-BC',
  'CA-ON',
  'CA-AB',
  'CA-QC',
]);
