// ISO 3166-1 alpha-2: the 249 officially assigned codes, plus XK (Kosovo), which is user-assigned
// in the standard but what Cloudflare and MaxMind both report for Kosovo. Anything else (XX,
// Cloudflare's "unknown"; T1, its Tor; EU/AP, legacy GeoIP continent codes; ZZ; UK, which the
// standard only reserves) is not a country the gate can judge.

const ASSIGNED = `
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
DE DJ DK DM DO DZ
EC EE EG EH ER ES ET
FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
HK HM HN HR HT HU
ID IE IL IM IN IO IQ IR IS IT
JE JM JO JP
KE KG KH KI KM KN KP KR KW KY KZ
LA LB LC LI LK LR LS LT LU LV LY
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ
OM
PA PE PF PG PH PK PL PM PN PR PS PT PW PY
QA
RE RO RS RU RW
SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
UA UG UM US UY UZ
VA VC VE VG VI VN VU
WF WS
YE YT
ZA ZM ZW
`
  .trim()
  .split(/\s+/);

/** Every code the gate accepts as a country: the assigned ISO 3166-1 alpha-2 codes and XK. */
export const COUNTRY_CODES: ReadonlySet<string> = new Set([...ASSIGNED, 'XK']);

/**
 * `value` as a country code when it is one (surrounding spaces and lower case forgiven), else
 * null: empty, `XX`, `T1`, two codes, anything not assigned.
 */
export function normalizeCountry(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const code = value.trim().toUpperCase();
  return COUNTRY_CODES.has(code) ? code : null;
}

/** Hints for codes operators write by mistake. */
const MISTAKES: Record<string, string> = { UK: 'GB', EL: 'GR' };

/**
 * The restricted list as configured: each entry must be an uppercase assigned code. Throws naming
 * the first bad entry (with the likely intended code for UK and EL), so a typo fails at start
 * instead of leaving a country unblocked.
 */
export function parseCountryList(entries: readonly string[], what: string): Set<string> {
  const out = new Set<string>();
  for (const entry of entries) {
    if (typeof entry !== 'string' || !COUNTRY_CODES.has(entry)) {
      const hint = typeof entry === 'string' ? MISTAKES[entry.trim().toUpperCase()] : undefined;
      throw new Error(
        `${what}: ${JSON.stringify(entry)} is not an uppercase ISO 3166-1 alpha-2 country code` +
          (hint ? ` (did you mean ${hint}?)` : ''),
      );
    }
    out.add(entry);
  }
  return out;
}
