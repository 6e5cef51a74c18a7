import { Type } from 'typebox';
import { offsetParam } from '../../core/http/paging.ts';
import { PM_VENUES } from '../../adapters/pm-venue/port.ts';

const ADDRESS = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const VENUE = Type.Union(PM_VENUES.map((v) => Type.Literal(v)));

export const CREDENTIAL_LIST_DEFAULT_LIMIT = 50;
export const CREDENTIAL_LIST_MAX_LIMIT = 200;

export const StoreCredentialBody = Type.Object(
  {
    venue: VENUE,
    label: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
        description: 'Your name for it, shown in listings.',
      }),
    ),
    signature_type: Type.Optional(
      Type.Integer({
        description:
          'polymarket: 0 EOA (the signer holds the funds), 1 POLY_PROXY (a Polymarket proxy wallet of the signer), ' +
          '2 POLY_GNOSIS_SAFE (a Safe the signer owns). Required for polymarket.',
      }),
    ),
    funder: Type.Optional({
      ...ADDRESS,
      description:
        'polymarket: the wallet that holds the funds and makes the orders: the proxy or Safe for types 1 and 2 ' +
        '(required); for type 0 it is the signer (omit it).',
    }),
    signer_address: Type.Optional({
      ...ADDRESS,
      description:
        'polymarket: the EOA that signs orders. Required in the client-signed flow (no signer_key); with a ' +
        'signer_key it must be that key’s address.',
    }),
    signer_key: Type.Optional(
      Type.String({
        pattern: '^0x[0-9a-fA-F]{64}$',
        description:
          'polymarket, hosted flow: the private key of the signer, 0x and 64 hex characters. It is a full owner of ' +
          'the funder wallet. Omit it for the client-signed flow. Refused while the operator has switched off ' +
          'hosted credential intake.',
      }),
    ),
    api_key: Type.Optional(
      Type.String({
        pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
        description:
          'polymarket: the CLOB L2 API key (a uuid), with api_secret and api_passphrase; omit all three to derive ' +
          'them with signer_key. kalshi: the API key id (a uuid).',
      }),
    ),
    api_secret: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9+/_-]{16,200}={0,2}$',
        description: 'polymarket: the CLOB L2 secret (base64).',
      }),
    ),
    api_passphrase: Type.Optional(
      Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$', description: 'polymarket: the CLOB L2 passphrase.' }),
    ),
    api_nonce: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4294967295,
        description: 'polymarket: the L1 nonce of the key to derive (default 0); only without api_key.',
      }),
    ),
    private_key_pem: Type.Optional(
      Type.String({
        minLength: 100,
        maxLength: 8000,
        description:
          'kalshi: the RSA private key of the API key, PEM (PKCS#1 or PKCS#8), at least 2048 bits.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CredentialIdParams = Type.Object(
  {
    id: Type.String({
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: 'The credential id (a uuid).',
    }),
  },
  { additionalProperties: false },
);

export const ListCredentialsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: CREDENTIAL_LIST_MAX_LIMIT })),
    offset: Type.Optional(offsetParam()),
    include_revoked: Type.Optional(
      Type.Boolean({ description: 'Also list revoked credentials (their metadata only); default false.' }),
    ),
  },
  { additionalProperties: false },
);

export const CredentialSchema = Type.Object(
  {
    id: Type.String({ description: 'A uuid.' }),
    venue: VENUE,
    label: Type.Union([Type.String(), Type.Null()]),
    meta: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description:
        'Non-secret display facts: flow (hosted or client_signed), api_key_hint (the last four characters of ' +
        'the key id) and last_used_at; for polymarket also signature_type, signature_type_name, signer_address ' +
        'and funder.',
    }),
    created_at: Type.String(),
    revoked_at: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const CredentialListSchema = Type.Object(
  { credentials: Type.Array(CredentialSchema) },
  { additionalProperties: false },
);

export const VerifyCredentialSchema = Type.Object(
  {
    credential: CredentialSchema,
    accepted: Type.Boolean({ description: 'Whether the venue accepts the credential now.' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: "The venue's reason when it refuses." }),
    checked_at: Type.String(),
  },
  { additionalProperties: false },
);

const CALL = Type.Object({ to: ADDRESS, data: Type.String() }, { additionalProperties: false });

export const OnboardingParams = Type.Object(
  {
    address: {
      ...ADDRESS,
      description: 'The wallet that holds the funds (the funder: an EOA, proxy or Safe).',
    },
  },
  { additionalProperties: false },
);

export const OnboardingSchema = Type.Object(
  {
    address: ADDRESS,
    trade_ready: Type.Boolean({ description: 'All six grants are set.' }),
    approvals: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          description: Type.String(),
          approved: Type.Boolean(),
          call: Type.Union([CALL, Type.Null()], {
            description: 'What the wallet calls to grant it (null when granted).',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    collateral: Type.Object(
      {
        pusd: Type.String({ description: 'pUSD, base units (6 decimals).' }),
        usdce_unwrapped: Type.String({ description: 'USDC.e not wrapped yet, base units.' }),
        wrap_calls: Type.Union([
          Type.Array(
            Type.Object(
              { id: Type.String(), description: Type.String(), to: ADDRESS, data: Type.String() },
              { additionalProperties: false },
            ),
          ),
          Type.Null(),
        ]),
      },
      { additionalProperties: false },
    ),
    collateral_note: Type.String(),
  },
  { additionalProperties: false },
);

export const FunderParams = Type.Object(
  { owner: { ...ADDRESS, description: 'An owner (signer) address.' } },
  { additionalProperties: false },
);

export const FunderSchema = Type.Object(
  {
    owner: ADDRESS,
    funder: Type.Union([ADDRESS, Type.Null()], {
      description: 'The likeliest funder Safe, or null when none.',
    }),
    candidates: Type.Array(
      Type.Object(
        {
          address: ADDRESS,
          grants_set: Type.Integer({ minimum: 0, maximum: 6 }),
          trade_ready: Type.Boolean(),
          pusd: Type.String(),
          usdce_unwrapped: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'Likeliest first: most grants set, then most pUSD.' },
    ),
  },
  { additionalProperties: false },
);

export const RotationQuery = Type.Object(
  { new_owner: { ...ADDRESS, description: 'The address that takes the signer’s place among the owners.' } },
  { additionalProperties: false },
);

export const RotationSchema = Type.Object(
  {
    credential_id: Type.String(),
    venue: Type.Literal('polymarket'),
    funder: ADDRESS,
    old_owner: ADDRESS,
    new_owner: ADDRESS,
    prev_owner: ADDRESS,
    call: Type.Object(
      { to: ADDRESS, data: Type.String(), value: Type.Literal('0') },
      { additionalProperties: false },
    ),
    sequence: Type.Array(Type.String()),
    rotation_policy: Type.String(),
  },
  { additionalProperties: false },
);

export const WrapBody = Type.Object(
  {
    credential_id: Type.String({
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: 'A polymarket credential of signature type 2 stored with its signer key.',
    }),
    amount_base_units: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,30}$',
        description: "USDC.e base units to wrap (6 decimals); default the Safe's whole unwrapped balance.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const WrapSchema = Type.Object(
  {
    wrapped_base_units: Type.String(),
    txs: Type.Array(Type.String(), {
      description: 'The relayed execTransaction hashes: the approve (if needed), then the wrap.',
    }),
    collateral: Type.Object(
      { pusd: Type.String(), usdce_unwrapped: Type.String() },
      { additionalProperties: false, description: "The Safe's balances after the wrap, base units." },
    ),
  },
  { additionalProperties: false },
);

const CONDITION_ID = Type.String({
  pattern: '^0x[0-9a-fA-F]{64}$',
  description: 'The market (condition id).',
});
const UUID = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});

export const PlaceOrderBody = Type.Object(
  {
    venue: Type.Optional(Type.Literal('polymarket')),
    wallet: {
      ...ADDRESS,
      description: "The funder of the credential (the order's maker): its policy governs.",
    },
    credential_id: {
      ...UUID,
      description: 'A polymarket credential stored with its signer key (hosted flow).',
    },
    condition_id: CONDITION_ID,
    token_id: Type.String({
      pattern: '^[1-9][0-9]{0,77}$',
      description: 'The outcome token (ERC-1155 position id).',
    }),
    action: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
    price_usd: Type.String({
      pattern: '^0?\\.[0-9]{1,6}$|^0$|^1(\\.0+)?$',
      description: "Limit price per share in (0, 1), on the market's tick grid.",
    }),
    size_shares: Type.String({
      pattern: '^[0-9]{1,12}(\\.[0-9]{1,6})?$',
      description: 'Shares, more than 0, at most 2 decimals (the venue’s rule).',
    }),
    client_order_id: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9._:-]{1,64}$',
        description: 'Claimed once per account: a second order with it is 409, nothing transmitted.',
      }),
    ),
    state: Type.Optional(
      // Free-form on purpose (the agent's own keys), so open: its size is bounded instead.
      Type.Object(
        {},
        {
          additionalProperties: true,
          maxProperties: 32,
          description:
            "The agent's own context for the order (its reasoning, a strategy tag): stored with the order, " +
            'returned in the export, never sent to the venue. At most 32 keys; 8 KB as JSON.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const PlacedOrderSchema = Type.Object(
  {
    venue: Type.Literal('polymarket'),
    order_id: Type.String({ description: "The venue's order id (the order's EIP-712 hash)." }),
    status: Type.String({ description: "The venue's status: live (resting), matched, delayed…" }),
    cost_usd: Type.String({ description: 'The notional at the limit price (what a buy pays).' }),
    fee_usd: Type.String(),
    policy_version: Type.Integer(),
  },
  { additionalProperties: false },
);

export const OrdersQuery = Type.Object(
  { credential_id: UUID, market: Type.Optional(CONDITION_ID) },
  { additionalProperties: false },
);

export const RestingOrdersSchema = Type.Object(
  {
    orders: Type.Array(
      Type.Object(
        {
          order_id: Type.String(),
          status: Type.String(),
          market: Type.String(),
          token_id: Type.String(),
          side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
          price_usd: Type.String(),
          original_size_shares: Type.String(),
          matched_size_shares: Type.String(),
          outcome: Type.String(),
          created_at: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const CancelOrderParams = Type.Object(
  { venue: Type.Literal('polymarket'), order_id: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) },
  { additionalProperties: false },
);

export const CancelOrderQuery = Type.Object({ credential_id: UUID }, { additionalProperties: false });

export const CancelledOrderSchema = Type.Object(
  { venue: Type.Literal('polymarket'), order_id: Type.String(), status: Type.String() },
  { additionalProperties: false },
);

export const CancelAllSchema = Type.Object(
  {
    venue: Type.Literal('polymarket'),
    cancelled: Type.Integer(),
    order_ids: Type.Array(Type.String()),
    failed_order_ids: Type.Optional(Type.Array(Type.String())),
    complete: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const PreparedOrderSchema = Type.Object(
  {
    venue: Type.Literal('polymarket'),
    prepare_id: Type.String(),
    client_order_id: Type.Union([Type.String(), Type.Null()]),
    typed_data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The EIP-712 payload (domain, types, primaryType, message) to sign; uint256 values as strings.',
    }),
    order: Type.Record(Type.String(), Type.Unknown(), { description: 'The exact V2 order struct.' }),
    cost_usd: Type.String(),
    fee_usd: Type.String(),
    policy_version: Type.Integer(),
    expires_at: Type.String({
      description: 'Submit the signature before this; afterwards the order is swept.',
    }),
  },
  { additionalProperties: false },
);

export const SubmitOrderBody = Type.Object(
  {
    prepare_id: Type.String({ pattern: '^pmo_[0-9a-z]{20}$' }),
    signature: Type.String({
      pattern: '^0x[0-9a-fA-F]{130}$',
      description: "The signer's EIP-712 signature of typed_data (65 bytes).",
    }),
  },
  { additionalProperties: false },
);

export const FillSyncBody = Type.Object(
  {
    wallet: { ...ADDRESS, description: 'The treasury wallet receiving the fills: the credential’s funder.' },
    credential_id: UUID,
  },
  { additionalProperties: false },
);

export const FillSyncSchema = Type.Object(
  {
    journaled: Type.Integer({ description: 'Fills booked by this run.' }),
    skipped: Type.Integer({ description: 'Fills booked before (by an earlier or a concurrent run).' }),
    settlements_journaled: Type.Integer({
      description: 'Of the journaled fills, those whose trade the venue reports settled on chain.',
    }),
    complete: Type.Boolean({ description: 'false: more trades remain (10 pages a run); sync again.' }),
  },
  { additionalProperties: false },
);
