import { CONNECTIONS, type Layout, LOAD_SECONDS, WARMUP_SECONDS } from './bench.js';
import type { MachineFacts } from './machine.js';
import type { ProfileSummary } from './profile.js';
import type { DispatchResult } from './scenarios/campaign-dispatch.js';
import type { FlowResult, LoadResult, ReadResult, Scenario, ScenarioResult } from './scenarios/scenario.js';

export interface Outcome {
  scenario: string;
  layout: Layout;
  result: ScenarioResult | null;
  error: string | null;
  /** Why the scenario did not start, when the run had no time left for it. */
  skipped: string | null;
}

export interface ReportInput {
  startedAt: Date;
  seconds: number;
  machine: MachineFacts;
  loadAverageAtEnd: number;
  databaseName: string;
  layouts: readonly Layout[];
  scenarios: readonly Scenario[];
  selected: ReadonlySet<string>;
  outcomes: Outcome[];
  profiled: boolean;
}

const number = (value: number, digits = 0) =>
  value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const DASH = '–';

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

/** The targets of the issue: what they read, and the bar. Judged on the one-process layout. */
interface Target {
  name: string;
  value(results: Results, layout: Layout): number | null;
  format(value: number): string;
  met(value: number): boolean;
  /** What the profiles (`--profile`) showed limits it, printed when the target is missed. */
  limit?: string;
}

class Results {
  constructor(private readonly outcomes: Outcome[]) {}

  load(scenario: string, layout: Layout): LoadResult | null {
    const result = this.find(scenario, layout);
    return result?.kind === 'load' ? result : null;
  }

  flow(scenario: string, layout: Layout): FlowResult | null {
    const result = this.find(scenario, layout);
    return result?.kind === 'flow' ? result : null;
  }

  reads(scenario: string, layout: Layout): ReadResult | null {
    const result = this.find(scenario, layout);
    return result?.kind === 'reads' ? result : null;
  }

  /** Service CPU per request of a load scenario, in ms. */
  cpu(scenario: string, layout: Layout): number | null {
    return this.load(scenario, layout)?.costs.serviceCpuMsPer ?? null;
  }

  cpuRatio(over: string, under: string, layout: Layout): number | null {
    const a = this.cpu(over, layout);
    const b = this.cpu(under, layout);
    return a !== null && b !== null && b > 0 ? a / b : null;
  }

  /** A carrier path's service CPU per message over the simulator's (end-to-end) in the same run. */
  againstSimulator(scenario: string, layout: Layout): number | null {
    const path = this.flow(scenario, layout)?.costs.serviceCpuMsPer;
    const simulator = this.flow('end-to-end', layout)?.costs.serviceCpuMsPer;
    return path !== undefined && simulator ? path / simulator : null;
  }

  ratio(over: string, under: string, layout: Layout): number | null {
    const a = this.load(over, layout);
    const b = this.load(under, layout);
    return a && b && b.acceptedPerSecond > 0 ? a.acceptedPerSecond / b.acceptedPerSecond : null;
  }

  private find(scenario: string, layout: Layout): ScenarioResult | null {
    return (
      this.outcomes.find((outcome) => outcome.scenario === scenario && outcome.layout.key === layout.key)
        ?.result ?? null
    );
  }
}

/** The scenarios that send through a real carrier path, each set beside the simulator's CPU per message. */
const CARRIER_PATHS: ReadonlySet<string> = new Set(['two-carriers', 'http-carrier', 'sender-choice']);

const againstSimulator = (scenario: string, what: string, bound: number): Target => ({
  name: `${what} (${scenario}) ≤ ${bound}× the simulator's service CPU per message (end-to-end)`,
  value: (results, layout) => results.againstSimulator(scenario, layout),
  format: (value) => `${number(value, 2)}×`,
  met: (value) => value <= bound,
});

const importTime = (scenario: string, bound: number, limit?: string): Target => ({
  name: `${scenario} ≤ ${bound} s, upload to completed`,
  ...(limit ? { limit } : {}),
  value: (results, layout) => {
    const flow = results.flow(scenario, layout);
    return flow && !flow.incomplete ? flow.wallSeconds : null;
  },
  format: (value) => `${number(value, 1)} s`,
  met: (value) => value <= bound,
});

const importMemory = (scenario: string, boundMiB: number): Target => ({
  name: `${scenario} peak memory of a process ≤ ${boundMiB} MiB`,
  limit:
    "an idle Tern process is already 170–190 MiB after a first import (Node and libraries, Prisma's query compiler as " +
    'WebAssembly); an import adds a second V8 isolate for its parser thread and, for an XLSX, exceljs (some 26 MiB of ' +
    'code) and its live heap of 30–45 MB: 80–100 MiB at the peak',
  value: (results, layout) => results.flow(scenario, layout)?.memory?.peakRssMiB ?? null,
  format: (value) => `${number(value)} MiB`,
  met: (value) => value <= boundMiB,
});

const TARGETS: Target[] = [
  {
    name: 'send-rest ≥ 1,500 accepted/s',
    value: (results, layout) => results.load('send-rest', layout)?.acceptedPerSecond ?? null,
    format: (value) => number(value),
    met: (value) => value >= 1_500,
  },
  {
    name: 'send-rest p99 < 100 ms',
    value: (results, layout) => results.load('send-rest', layout)?.p99Ms ?? null,
    format: (value) => `${number(value)} ms`,
    met: (value) => value < 100,
  },
  {
    name: 'send-graphql within 10 % of send-rest by service CPU per request (graphql ÷ rest ≤ 1.10)',
    limit:
      "both layers run the same operation on the same resolvers; /graphql alone goes through Yoga's HTTP layer " +
      '(a whatwg-node Request, Headers and Response per request, their promise chains and the garbage they leave); ' +
      'the section "GraphQL against /v1" sets what Yoga alone costs (floor-graphql − floor-rest) against the gap',
    value: (results, layout) => results.cpuRatio('send-graphql', 'send-rest', layout),
    format: (value) => number(value, 2),
    met: (value) => value <= 1.1,
  },
  {
    name: 'quotas and countries ≤ 0.03 ms of service CPU per message (send-rest-quota − send-rest)',
    limit:
      'the reservation is part of the statement that stores the messages, and the allowed countries are read in ' +
      'one statement per batch of concurrent sends; what remains is parsing the number (libphonenumber-js) and ' +
      'the batched read. Usage is counted in both scenarios: only the limits and the countries differ',
    value: (results, layout) => {
      const on = results.cpu('send-rest-quota', layout);
      const off = results.cpu('send-rest', layout);
      return on !== null && off !== null ? on - off : null;
    },
    format: (value) => `${number(value, 3)} ms`,
    met: (value) => value <= 0.03,
  },
  {
    name: 'gateway/baseline ≥ 0.6, REST',
    value: (results, layout) => results.ratio('send-rest', 'baseline', layout),
    format: (value) => number(value, 2),
    met: (value) => value >= 0.6,
  },
  {
    name: 'gateway/baseline ≥ 0.6, GraphQL',
    value: (results, layout) => results.ratio('send-graphql', 'baseline', layout),
    format: (value) => number(value, 2),
    met: (value) => value >= 0.6,
  },
  {
    name: 'end-to-end ≥ 2,000 messages/s',
    limit:
      'one process carries acceptance and delivery on one thread at ~1,000 messages/s, where every batch is small (0.7 ' +
      'PostgreSQL transactions per message; a campaign, whose batches are large, costs 0.2 ms per message to sent): ' +
      'the PostgreSQL driver and pool (a fifth of the CPU, with their socket writes), Fastify, Prisma, Redis (a rate-limit ' +
      'script per request) and the token check',
    // An incomplete run still has its delivery rate up to the deadline, and missed the target.
    value: (results, layout) => results.flow('end-to-end', layout)?.perSecond ?? null,
    format: (value) => number(value),
    met: (value) => value >= 2_000,
  },
  {
    name: 'end-to-end ≤ 0.45 ms of service CPU per message',
    value: (results, layout) => results.flow('end-to-end', layout)?.costs.serviceCpuMsPer ?? null,
    format: (value) => `${number(value, 2)} ms`,
    met: (value) => value <= 0.45,
  },
  {
    name: 'campaign dispatch ≥ 3,000 messages/s to sent',
    // As for end-to-end: a campaign not through by the deadline still has its rate so far, and missed.
    value: (results, layout) => results.flow('campaign-dispatch', layout)?.perSecond ?? null,
    format: (value) => number(value),
    met: (value) => value >= 3_000,
  },
  {
    name: '100,000 scheduled for one instant released and delivered no slower than end-to-end',
    value: (results, layout) => {
      const released = results.flow('scheduled-release', layout)?.perSecond;
      const immediate = results.flow('end-to-end', layout)?.perSecond;
      return released && immediate ? released / immediate : null;
    },
    format: (value) => `${number(value, 2)}× end-to-end`,
    met: (value) => value >= 1,
  },
  {
    name: 'webhooks ≥ 2,000 callbacks/s, draining a backlog of 20,000',
    // A drain not through by the deadline still has its rate so far, and missed.
    value: (results, layout) => results.flow('webhooks', layout)?.perSecond ?? null,
    format: (value) => number(value),
    met: (value) => value >= 2_000,
  },
  {
    name: 'webhooks p99 event → callback < 1 s, under a steady 600/s',
    value: (results, layout) => results.flow('webhooks', layout)?.p99Ms ?? null,
    format: (value) => `${number(value)} ms`,
    met: (value) => value < 1_000,
  },
  againstSimulator('http-carrier', 'HTTP carrier', 1.5),
  againstSimulator('two-carriers', 'SMPP', 2),
  importTime(
    'import-csv',
    3,
    'the parse in its thread (about 1 s for 100,000 rows, csv-parse and the row rules) and one INSERT of every row; ' +
      'runs on a quiet machine take 2.9–3.5 s',
  ),
  importTime('import-xlsx', 20),
  importMemory('import-csv', 286),
  importMemory('import-xlsx', 250),
];

export function renderReport(input: ReportInput): string {
  const { machine, layouts, outcomes } = input;
  const results = new Results(outcomes);
  const runnable = input.scenarios.filter((scenario) => 'run' in scenario);
  const sections: string[] = [];

  sections.push(
    `# Tern benchmark\n\n${input.startedAt.toISOString()} · ${number(input.seconds)} s in all · commit ${machine.commit}` +
      (input.selected.size < runnable.length || layouts.length < 2
        ? ' · **partial run** (`--only`/`--layout`)'
        : ''),
  );

  sections.push(
    `## Machine\n\n` +
      table(
        ['', ''],
        [
          ['CPU', machine.cpu],
          ['Cores', String(machine.cores)],
          ['Memory', `${machine.memoryGiB} GiB`],
          ['OS', machine.os],
          ['Node.js', machine.node],
          ['PostgreSQL', machine.postgres],
          ['Redis', machine.redis],
          ['Load generator', `autocannon ${machine.autocannon}, in the harness process on the same machine`],
          [
            'Load average (1 min), start → end',
            `${number(machine.loadAverage, 2)} → ${number(input.loadAverageAtEnd, 2)}`,
          ],
        ],
      ),
  );

  sections.push(
    [
      '## How it ran',
      '',
      `- Tern runs as it does in production: child processes \`node dist/main.js <role>\` (compiled first, as \`npm start\` does) with \`NODE_ENV=production\`, \`LOG_LEVEL=warn\`, \`SIMULATOR_DELAY_MS=0\` and every other setting at its default (\`DATABASE_POOL_SIZE\` 20, \`SEND_CONCURRENCY\` 32), on a fresh database \`${input.databaseName}\` (dropped at the end) and a Redis prefix of each scenario's own (its keys deleted after it).`,
      `- Load: ${CONNECTIONS} connections, a ${WARMUP_SECONDS} s warm-up, then ${LOAD_SECONDS} s measured; every request has a new destination number (none ending 0001 or 0002, so every message is delivered). Scenarios run one after another, never side by side; before each the message tables are emptied and PostgreSQL takes a checkpoint.`,
      '- **Acceptance scenarios run without workers** (role `api`), for the gateway and the baseline alike, so both do the same work: accept, store, enqueue. The jobs they enqueue are deleted with their prefix. The end-to-end scenario runs the API and the workers together, in one process in the one-process layout.',
      `- Layouts: **${layouts.map((layout) => `${layout.label}**: acceptance on ${layout.describe.acceptance}, baseline on ${layout.describe.baseline}, end-to-end on ${layout.describe.flow}`).join('; **')}. Several API processes are the product's own \`WEB_CONCURRENCY\` (node:cluster, one port); the baseline's copies share a port through \`test/bench/cluster.ts\`, the same way.`,
      "- Costs: *service CPU* is the user+system CPU of every process under test (from /proc) per request or message, over the measured window; *PG transactions* are the bench database's commits and rollbacks per message stored (pg_stat_database); *machine busy* is all cores, PostgreSQL, Redis, the load generator and anything else on this shared machine included.",
      '- Targets are read from this report, never asserted in tests.',
    ].join('\n'),
  );

  const loadScenarios = runnable.filter((scenario) =>
    layouts.some((layout) => results.load(scenario.name, layout)),
  );
  if (loadScenarios.length > 0) {
    sections.push(
      `## Acceptance\n\n` +
        table(
          [
            'Scenario',
            ...layouts.flatMap((layout) => [`${layout.label}: accepted/s`, 'p50', 'p99', 'errors']),
          ],
          loadScenarios.map((scenario) => [
            scenario.name,
            ...layouts.flatMap((layout) => {
              const load = results.load(scenario.name, layout);
              return load
                ? [
                    `**${number(load.acceptedPerSecond)}**`,
                    `${number(load.p50Ms)} ms`,
                    `${number(load.p99Ms)} ms`,
                    number(load.errors),
                  ]
                : [DASH, DASH, DASH, DASH];
            }),
          ]),
        ) +
        '\n\n' +
        table(
          ['Gateway against baseline (accepted/s ÷ accepted/s)', ...layouts.map((layout) => layout.label)],
          [
            [
              'send-rest / baseline',
              ...layouts.map((layout) => formatRatio(results.ratio('send-rest', 'baseline', layout))),
            ],
            [
              'send-graphql / baseline',
              ...layouts.map((layout) => formatRatio(results.ratio('send-graphql', 'baseline', layout))),
            ],
            [
              'send-rest / baseline-batched',
              ...layouts.map((layout) => formatRatio(results.ratio('send-rest', 'baseline-batched', layout))),
            ],
            [
              'send-graphql / baseline-batched',
              ...layouts.map((layout) =>
                formatRatio(results.ratio('send-graphql', 'baseline-batched', layout)),
              ),
            ],
            [
              'send-graphql / send-rest',
              ...layouts.map((layout) => formatRatio(results.ratio('send-graphql', 'send-rest', layout))),
            ],
          ],
        ),
    );
  }

  const flowScenarios = runnable.filter((scenario) =>
    layouts.some((layout) => results.flow(scenario.name, layout)),
  );
  for (const scenario of flowScenarios) {
    const flows = layouts.map((layout) => results.flow(scenario.name, layout));
    const row = (name: string, cell: (flow: FlowResult, layout: Layout) => string) => [
      name,
      ...flows.map((flow, index) => (flow ? cell(flow, layouts[index]!) : DASH)),
    ];
    sections.push(
      `## ${scenario.name}\n\n${scenario.describe}.\n\n` +
        table(
          ['', ...layouts.map((layout) => layout.label)],
          [
            row(
              'messages accepted / delivered / failed',
              (flow) => `${number(flow.accepted)} / ${number(flow.completed)} / ${number(flow.failed)}`,
            ),
            row('sends not accepted', (flow) => (flow.errors === undefined ? DASH : number(flow.errors))),
            row('intake while delivering (accepted/s)', (flow) => number(flow.intakePerSecond)),
            row('wall time, first send → last delivered', (flow) => `${number(flow.wallSeconds, 1)} s`),
            row('**messages/s**', (flow) => `**${number(flow.perSecond)}**`),
            row(
              'acceptance → delivered, p50 / p99',
              (flow) => `${number(flow.p50Ms)} ms / ${number(flow.p99Ms)} ms`,
            ),
            // Three decimals under 0.1 ms: a check's 0.03 ms target needs them.
            row(
              'service CPU per message',
              (flow) => `${number(flow.costs.serviceCpuMsPer, flow.costs.serviceCpuMsPer < 0.1 ? 3 : 2)} ms`,
            ),
            row('PG transactions per message', (flow) =>
              formatOptional(flow.costs.pgTransactionsPerMessage, 1),
            ),
            row('machine busy', (flow) => `${number(flow.costs.machineBusyPercent)} %`),
            row('complete?', (flow) => flow.incomplete ?? 'yes'),
            ...(flows.some((flow) => flow && 'dispatch' in flow)
              ? [
                  row('start → campaign `finished` (every contact has a message)', (flow) => {
                    const seconds = (flow as Partial<DispatchResult>).dispatch?.startToFinishedSeconds;
                    return seconds === undefined
                      ? DASH
                      : seconds === null
                        ? 'not finished'
                        : `${number(seconds, 1)} s`;
                  }),
                ]
              : []),
            ...(flows.some((flow) => flow?.failover)
              ? [
                  row('kill of carrier a → first submit at b', (flow) => {
                    const ms = flow.failover?.killToOtherMs;
                    return ms === undefined ? DASH : ms === null ? 'none' : `${number(ms)} ms`;
                  }),
                  row('CPU per route choice (1,000 routes)', (flow) =>
                    flow.failover ? `${number(flow.failover.routeChoiceUs * 1000)} ns` : DASH,
                  ),
                ]
              : []),
            ...(flows.some((flow) => flow?.senderChoiceUs !== undefined)
              ? [
                  row('CPU per sender choice (pool of 100, in memory; goal < 20 µs)', (flow) =>
                    flow.senderChoiceUs === undefined ? DASH : `${number(flow.senderChoiceUs, 2)} µs`,
                  ),
                ]
              : []),
            ...(CARRIER_PATHS.has(scenario.name)
              ? [
                  row('CPU per message against end-to-end (simulator)', (_flow, layout) =>
                    formatTimes(results.againstSimulator(scenario.name, layout)),
                  ),
                ]
              : []),
            ...(flows.some((flow) => flow?.memory)
              ? [
                  row('resident memory, before → peak', (flow) =>
                    flow.memory
                      ? `${number(flow.memory.idleRssMiB)} → ${number(flow.memory.peakRssMiB)} MiB`
                      : DASH,
                  ),
                ]
              : []),
          ],
        ),
    );
  }

  for (const scenario of runnable) {
    for (const layout of layouts) {
      const reads = results.reads(scenario.name, layout);
      if (!reads) continue;
      sections.push(
        `## ${scenario.name} (${layout.label})\n\n${scenario.describe}; against ${reads.data}, ${reads.pace ?? 'one request at a time'}.\n\n` +
          table(
            ['Read', 'requests', 'p50', 'p95', 'p99'],
            reads.reads.map((read) => [
              read.name,
              number(read.requests),
              `**${number(read.p50Ms, 1)} ms**`,
              read.p95Ms === undefined ? '–' : `${number(read.p95Ms, 1)} ms`,
              `${number(read.p99Ms, 1)} ms`,
            ]),
          ) +
          (reads.note ? `\n${reads.note}\n` : ''),
      );
    }
  }

  const costRows = outcomes.flatMap((outcome) =>
    outcome.result?.kind === 'load'
      ? [
          [
            outcome.scenario,
            outcome.layout.label,
            `${number(outcome.result.costs.serviceCpuMsPer, 2)} ms`,
            formatOptional(outcome.result.costs.pgTransactionsPerMessage, 1),
            `${number(outcome.result.costs.machineBusyPercent)} %`,
            `${number(outcome.result.costs.loadGeneratorCorePercent)} %`,
          ],
        ]
      : [],
  );
  if (costRows.length > 0) {
    sections.push(
      `## Costs of acceptance\n\n` +
        table(
          [
            'Scenario',
            'Layout',
            'service CPU per request',
            'PG transactions per message',
            'machine busy (all cores)',
            'load generator (of one core)',
          ],
          costRows,
        ),
    );
  }

  const floorLayouts = layouts.filter(
    (layout) => results.cpu('floor-rest', layout) !== null && results.cpu('floor-graphql', layout) !== null,
  );
  if (floorLayouts.length > 0) sections.push(renderGraphqlFloor(results, floorLayouts));

  sections.push(
    `## Targets\n\nOn these ${machine.cores}-core machines, judged on the one-process layout (all cores beside it); ✅ met, ❌ missed.\n\n` +
      table(
        ['Target', ...layouts.map((layout) => layout.label)],
        TARGETS.map((target) => [
          target.name,
          ...layouts.map((layout) => {
            const value = target.value(results, layout);
            return value === null
              ? 'not measured'
              : `${target.format(value)} ${target.met(value) ? '✅' : '❌'}`;
          }),
        ]),
      ),
  );

  const missed = TARGETS.filter(
    (target) =>
      target.limit &&
      layouts.some((layout) => {
        const value = target.value(results, layout);
        return value !== null && !target.met(value);
      }),
  );
  if (missed.length > 0) {
    sections.push(
      `## What stops the missed targets\n\nWhat the profiles (\`--profile\`) showed:\n\n` +
        missed.map((target) => `- **${target.name}**: ${target.limit}.`).join('\n'),
    );
  }

  sections.push(
    `## Scenarios\n\n` +
      table(
        ['Scenario', 'What', 'State'],
        input.scenarios.map((scenario) => [
          scenario.name,
          scenario.describe,
          'pending' in scenario
            ? scenario.pending
            : !input.selected.has(scenario.name)
              ? 'not selected in this run'
              : stateOf(scenario.name, outcomes),
        ]),
      ),
  );

  const errorSamples = outcomes.flatMap((outcome) =>
    outcome.result?.firstError
      ? [
          `- ${outcome.scenario}, ${outcome.layout.label}: \`${outcome.result.firstError.replaceAll('`', "'")}\``,
        ]
      : [],
  );
  if (errorSamples.length > 0)
    sections.push(`## First error of each scenario that had errors\n\n${errorSamples.join('\n')}`);

  const failures = outcomes.filter((outcome) => outcome.error);
  if (failures.length > 0) {
    sections.push(
      `## Failures\n\n` +
        failures
          .map(
            (outcome) =>
              `### ${outcome.scenario}, ${outcome.layout.label}\n\n\`\`\`\n${outcome.error}\n\`\`\``,
          )
          .join('\n\n'),
    );
  }

  if (input.profiled) {
    sections.push(
      `## Profiles\n\nCPU is V8's sampling profiler (\`--cpu-prof\`) on every process under test, cut to the measured window: self time by package or source file, and the costliest functions; "per" is per request (per message for flows). Redis figures are the whole server's (\`INFO commandstats\`), other clients included. PostgreSQL activity samples the bench database's backends every 50 ms.\n\n` +
        outcomes
          .filter((outcome) => outcome.result?.profile)
          .map((outcome) =>
            renderProfile(`${outcome.scenario}, ${outcome.layout.label}`, outcome.result!.profile!),
          )
          .join('\n\n'),
    );
  }

  return `${sections.join('\n\n')}\n`;
}

/**
 * GraphQL's cost over /v1 split into what Yoga alone costs per request (a bare Yoga against a
 * bare Fastify route, neither doing any work) and what is Tern's own, with the least
 * graphql ÷ rest ratio that Yoga's own cost leaves possible.
 */
function renderGraphqlFloor(results: Results, layouts: readonly Layout[]): string {
  const ms = (value: number | null) => (value === null ? DASH : `${number(value, 3)} ms`);
  const rows = layouts.map((layout) => {
    const rest = results.cpu('send-rest', layout);
    const graphql = results.cpu('send-graphql', layout);
    const yoga = (results.cpu('floor-graphql', layout) ?? 0) - (results.cpu('floor-rest', layout) ?? 0);
    const gap = rest !== null && graphql !== null ? graphql - rest : null;
    return { layout, rest, graphql, yoga, gap };
  });
  return (
    '## GraphQL against /v1\n\nService CPU per request. *Yoga alone* is floor-graphql − floor-rest: the same bytes answered with no work through a bare Yoga and through a bare Fastify route. What Yoga alone costs no plugin or resolver of Tern can remove; the least graphql ÷ rest it leaves is (send-rest + Yoga alone) ÷ send-rest.\n\n' +
    table(
      ['', ...rows.map((row) => row.layout.label)],
      [
        ['send-rest', ...rows.map((row) => ms(row.rest))],
        ['send-graphql', ...rows.map((row) => ms(row.graphql))],
        ['GraphQL over /v1 (send-graphql − send-rest)', ...rows.map((row) => ms(row.gap))],
        ['Yoga alone (floor-graphql − floor-rest)', ...rows.map((row) => ms(row.yoga))],
        [
          "Tern's own (the gap − Yoga alone)",
          ...rows.map((row) => ms(row.gap === null ? null : row.gap - row.yoga)),
        ],
        [
          'graphql ÷ rest, measured',
          ...rows.map((row) => formatRatio(row.rest && row.graphql !== null ? row.graphql / row.rest : null)),
        ],
        [
          'graphql ÷ rest, the least Yoga allows',
          ...rows.map((row) => formatRatio(row.rest ? (row.rest + row.yoga) / row.rest : null)),
        ],
      ],
    )
  );
}

function stateOf(scenario: string, outcomes: Outcome[]): string {
  const states = outcomes
    .filter((outcome) => outcome.scenario === scenario)
    .map((outcome) => `${outcome.layout.label}: ${outcome.skipped ?? (outcome.error ? 'failed' : 'ran')}`);
  return states.join('; ');
}

function formatRatio(value: number | null): string {
  return value === null ? DASH : number(value, 2);
}

function formatTimes(value: number | null): string {
  return value === null ? DASH : `${number(value, 2)}×`;
}

function formatOptional(value: number | null, digits: number): string {
  return value === null ? DASH : number(value, digits);
}

function renderProfile(title: string, profile: ProfileSummary): string {
  const parts = [`### ${title}`];
  if (profile.cpu) {
    parts.push(
      `${number(profile.cpu.sampledMs)} ms of CPU sampled.\n\n` +
        table(
          ['Where (self time)', '%', 'ms per'],
          profile.cpu.areas.map((area) => [area.name, number(area.percent, 1), number(area.per, 3)]),
        ) +
        '\n\n' +
        table(
          ['Function (self time)', '%', 'ms per'],
          profile.cpu.functions.map((fn) => [`\`${fn.name}\``, number(fn.percent, 1), number(fn.per, 3)]),
        ),
    );
  }
  if (profile.redis.length > 0) {
    parts.push(
      table(
        ['Redis command', 'calls per', 'µs per call'],
        profile.redis
          .slice(0, 10)
          .map((row) => [row.command, number(row.per, 2), number(row.usecPerCall, 1)]),
      ),
    );
  }
  parts.push(
    `PostgreSQL backends of the bench database: ${number(profile.pgActivity.averageBackends, 1)} on average.\n\n` +
      table(
        ['Backend state', '% of samples', 'backends on average'],
        profile.pgActivity.states.map((state) => [
          state.name,
          number(state.percent, 1),
          number(state.per, 1),
        ]),
      ),
  );
  if (profile.pgStatements) {
    parts.push(
      table(
        ['Statement (pg_stat_statements)', 'calls per', 'mean ms', '% of time'],
        profile.pgStatements.map((row) => [
          `\`${row.query.replaceAll('|', '\\|')}\``,
          number(row.per, 2),
          number(row.meanMs, 3),
          number(row.percent, 1),
        ]),
      ),
    );
  }
  parts.push(...profile.notes);
  return parts.join('\n\n');
}
