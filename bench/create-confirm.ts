// A card payment end to end: createPayment (secret key) then confirmPayment (publishable key + client
// secret, card 4242…) through the sandbox processor, at each sandbox latency (SANDBOX_LATENCY_MS). Beside
// it, the same flow against the no-I/O Yoga server whose confirm waits the same latency.
// Throughput and p99: closed loop at `concurrency` (flows/s) and an open model at a fixed rate below
// saturation (BENCH_OPEN_LOAD × the service's closed-loop rate; the same rate for the ceiling).
// The service's own overhead per payment, in the open-model run: each flow's end-to-end time minus the
// processor time of its authorization, as the sandbox itself timed it (bench/lib/sandbox-timing.ts: from
// the request's headers in to the answer's last byte out, matched by the attempt id the service sends as
// its Idempotency-Key). What is left is the service's work: two HTTP + GraphQL requests, key lookups, its
// SQL, the connector's HTTP client, the loopback hops. For the ceiling the same subtraction uses the bare
// server's own timed wait.
import { startBareYoga } from './create-payment.ts';
import { runLoad, runLoadMeasuringCpu, summaryOf, warmUp } from './lib/load.ts';
import type { Stack } from './lib/stack.ts';
import { ratio, summarize } from './lib/stats.ts';

/** End-to-end minus processor time, flow by flow; flows whose processor time is missing are counted apart. */
function overhead(flows: [string, number][], processor: Map<string, number>) {
  const overheads: number[] = [];
  const processorMs: number[] = [];
  let unmatched = 0;
  for (const [attemptId, endToEndMs] of flows) {
    const spent = processor.get(attemptId);
    if (spent === undefined) unmatched += 1;
    else {
      overheads.push(endToEndMs - spent);
      processorMs.push(spent);
    }
  }
  return { overheadMs: summarize(overheads), processorMs: summarize(processorMs), unmatched };
}

async function atLatency(stack: Stack, latencyMs: number) {
  const { concurrency, durationS, warmupS, processWarmupS, openLoad } = stack.settings;
  await stack.start({ sandboxLatencyMs: latencyMs });
  const bare = await startBareYoga(latencyMs);
  const bareTimings = async () => {
    const { timings } = await bare.child.request<{ timings: [string, number][] }>('timings');
    return new Map(timings);
  };
  try {
    console.log(`create+confirm at sandbox latency ${latencyMs} ms: service, closed loop`);
    const serviceLoad = { model: 'closed', target: stack.target, operation: 'createConfirm', concurrency, durationS, warmupS } as const;
    await warmUp(serviceLoad, processWarmupS);
    const serviceClosed = await runLoadMeasuringCpu(serviceLoad, { api: stack.api!, worker: stack.worker!, sandbox: stack.sandbox! });
    console.log(`  ${serviceClosed.perSecond} payments/s, p99 ${serviceClosed.latencyMs.p99} ms`);
    const rate = Math.max(1, Math.round(serviceClosed.perSecond * openLoad));

    console.log(`create+confirm at sandbox latency ${latencyMs} ms: service, open model at ${rate}/s`);
    await stack.processorTimings(); // forget the closed loop's
    const { result: serviceOpen, apiRuntime: openApiRuntime } = await stack.probingApiRuntime(() =>
      runLoad({ model: 'open', target: stack.target, operation: 'createConfirm', ratePerS: rate, durationS, warmupS, maxInFlight: concurrency * 8 }),
    );
    const serviceOverhead = overhead(serviceOpen.flows ?? [], await stack.processorTimings());
    console.log(`  p50 ${serviceOpen.latencyMs.p50} ms, p99 ${serviceOpen.latencyMs.p99} ms; overhead p50 ${serviceOverhead.overheadMs.p50} ms`);

    console.log(`create+confirm at sandbox latency ${latencyMs} ms: no-I/O Yoga ceiling, closed loop and open model at ${rate}/s`);
    const bareLoad = { model: 'closed', target: bare.target, operation: 'createConfirm', concurrency, durationS, warmupS } as const;
    await warmUp(bareLoad, processWarmupS);
    const bareClosed = await runLoadMeasuringCpu(bareLoad, { bareYoga: bare.child });
    await bareTimings();
    const bareOpen = await runLoad({
      model: 'open',
      target: bare.target,
      operation: 'createConfirm',
      ratePerS: rate,
      durationS,
      warmupS,
      maxInFlight: concurrency * 8,
    });
    const bareOverhead = overhead(bareOpen.flows ?? [], await bareTimings());
    console.log(`  ${bareClosed.perSecond} payments/s; open p99 ${bareOpen.latencyMs.p99} ms; overhead p50 ${bareOverhead.overheadMs.p50} ms`);

    return {
      sandboxLatencyMs: latencyMs,
      openRatePerS: rate,
      service: { closed: summaryOf(serviceClosed), open: summaryOf(serviceOpen), openApiRuntime, ...serviceOverhead },
      bareYoga: { closed: summaryOf(bareClosed), open: summaryOf(bareOpen), ...bareOverhead },
      ratios: {
        throughputToBareYoga: ratio(serviceClosed.perSecond, bareClosed.perSecond),
        apiCpuPerPaymentToBareYoga: ratio(serviceClosed.cpuMsPerOperation.api, bareClosed.cpuMsPerOperation.bareYoga),
        openP99ToBareYoga: ratio(serviceOpen.latencyMs.p99, bareOpen.latencyMs.p99),
        overheadP50ToBareYoga: ratio(serviceOverhead.overheadMs.p50, bareOverhead.overheadMs.p50),
        overheadP50ToGoal: ratio(serviceOverhead.overheadMs.p50, 3),
      },
    };
  } finally {
    await bare.child.stop();
  }
}

export async function benchCreateConfirm(stack: Stack) {
  const results = [];
  for (const latencyMs of stack.settings.sandboxLatenciesMs) results.push(await atLatency(stack, latencyMs));
  // Later parts run with the sandbox answering at once.
  await stack.start({ sandboxLatencyMs: 0 });
  return { concurrency: stack.settings.concurrency, goalOverheadP50Ms: 3, goalOverheadP99Ms: 10, hyperswitchClaimedOverheadMs: 25, byLatency: results };
}
