import { Type } from 'typebox';

const STATUSES = ['planned', 'executing', 'filled', 'cancelled', 'aborted'] as const;
const PHASES = [
  'burn_pending',
  'burn_submitted',
  'awaiting_attestation',
  'mint_submitted',
  'minted',
] as const;
const TX = Type.Union([Type.String({ pattern: '^0x[0-9a-f]{64}$' }), Type.Null()]);
const UNITS = Type.String({ pattern: '^[0-9]{1,78}$' });

export const CreateRebalanceBody = Type.Object(
  {
    from_chain_id: Type.Integer({ description: 'The chain whose USDC is burned (8453 or 137 by default).' }),
    to_chain_id: Type.Integer({ description: 'The chain where it is minted; not the same chain.' }),
    amount: Type.String({
      pattern: '^[0-9]{1,40}$',
      description: 'USDC base units (6 decimals) to burn: a decimal integer, more than 0, at most 10^15.',
    }),
  },
  { additionalProperties: false },
);

export const RebalanceIdParams = Type.Object(
  { id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export const RebalanceSchema = Type.Object(
  {
    id: Type.String(),
    from_chain_id: Type.Integer(),
    to_chain_id: Type.Integer(),
    amount: UNITS,
    status: Type.Union(STATUSES.map((s) => Type.Literal(s))),
    phase: Type.Union([...PHASES.map((p) => Type.Literal(p)), Type.Null()], {
      description:
        'burn_pending: admitted, the burn not signed yet; burn_submitted: approve and burn signed, recorded and sent; ' +
        'awaiting_attestation: the burn landed (USDC in transit); mint_submitted: receiveMessage sent on the ' +
        'destination; minted: it landed (status filled). An ended rebalance keeps the phase it reached.',
    }),
    burn_tx: TX,
    mint_tx: TX,
    finality: Type.Union([Type.Literal('fast'), Type.Literal('standard')], {
      description: "The policy's rebalance.finality when it was admitted.",
    }),
    max_fee: Type.String({
      description: 'The most Circle may keep (USDC base units): 0 for standard transfers.',
    }),
    policy_version: Type.Integer(),
    policy_hash: Type.String(),
    report: Type.Object(
      {
        fee: Type.Optional(UNITS),
        minted: Type.Optional(UNITS),
        gas_wei: Type.Optional(Type.Record(Type.String(), UNITS)),
        attestation: Type.Optional(
          Type.Object({ status: Type.String(), checked_at: Type.String() }, { additionalProperties: false }),
        ),
        abort: Type.Optional(
          Type.Object({ reason: Type.String(), detail: Type.String() }, { additionalProperties: false }),
        ),
        cancel: Type.Optional(
          Type.Object({ reason: Type.String(), detail: Type.String() }, { additionalProperties: false }),
        ),
        mint_failures: Type.Optional(
          Type.Array(Type.Object({ tx: Type.String(), at: Type.String() }, { additionalProperties: false })),
        ),
      },
      {
        additionalProperties: false,
        description:
          'fee: what Circle kept; minted: what reached the wallet; gas_wei: native gas the executor paid, per chain; ' +
          'attestation (in a 202): what the attestation service answered; abort / cancel: why it ended without moving value.',
      },
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'Rebalance' },
);
