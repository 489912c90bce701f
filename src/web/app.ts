/**
 * The page's wiring: which PCFs are loaded, the compute form, the run in flight (one at a time,
 * cancellable), and the result's heatmap, readout, plot and download. Everything it computes goes
 * through the pxl bundle (imported as 'pxl', which the build maps to ../browser/pxl.js).
 *
 * `document.body.dataset.state` says where the page is: loading, idle, running, done, cancelled
 * or failed (tests and scripts wait on it).
 */
import { browserCapabilities, CancelledError, OutOfMemoryError, randomPcfs, type PcfSet } from 'pxl';
import { clusterOrder } from './clustering.js';
import { cssGradient } from './colormap.js';
import { saveBytes } from './download.js';
import { readPcfFile, watchFileInputs } from './fileInput.js';
import { Heatmap } from './heatmap.js';
import { resultNpy, runOperation, type Operation, type RunResult } from './operation.js';
import { plotPcfs } from './pcfPlot.js';

/** Most cells per side of the heatmap; larger results are averaged down to it. */
const HEATMAP_SIDE = 560;
const ROW_COLOR = '#d6336c';
const COL_COLOR = '#1c7ed6';

type PageState = 'loading' | 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page lacks #${id}`);
  return element as T;
}

const ui = {
  capabilities: byId('capabilities'),
  warning: byId('warning'),
  file: byId<HTMLInputElement>('file'),
  dropzone: byId('dropzone'),
  generateForm: byId<HTMLFormElement>('generate-form'),
  genN: byId<HTMLInputElement>('gen-n'),
  genPoints: byId<HTMLInputElement>('gen-points'),
  genSeed: byId<HTMLInputElement>('gen-seed'),
  generate: byId<HTMLButtonElement>('generate'),
  dataset: byId('dataset'),
  computeForm: byId<HTMLFormElement>('compute-form'),
  operation: byId<HTMLSelectElement>('operation'),
  pLabel: byId('p-label'),
  p: byId<HTMLInputElement>('p'),
  dtype: byId<HTMLSelectElement>('dtype'),
  device: byId<HTMLSelectElement>('device'),
  deviceNote: byId('device-note'),
  compute: byId<HTMLButtonElement>('compute'),
  cancel: byId<HTMLButtonElement>('cancel'),
  progress: byId<HTMLProgressElement>('progress'),
  status: byId('status'),
  error: byId('error'),
  result: byId('result'),
  summary: byId('result-summary'),
  heatmap: byId<HTMLCanvasElement>('heatmap'),
  rowLine: byId('row-line'),
  colLine: byId('col-line'),
  legend: byId('legend'),
  legendMin: byId('legend-min'),
  legendMax: byId('legend-max'),
  readout: byId('readout'),
  plot: byId<HTMLCanvasElement>('plot'),
  plotRow: byId('plot-row'),
  plotCol: byId('plot-col'),
  download: byId<HTMLButtonElement>('download'),
};

const heatmap = new Heatmap(ui.heatmap);
let pcfs: PcfSet | undefined;
let running: AbortController | undefined;
let result: RunResult | undefined;
/** CPU threads a run uses, for the summary line. */
let cpuThreads = 1;

function setState(state: PageState): void {
  document.body.dataset.state = state;
  ui.compute.disabled = state === 'running' || state === 'loading' || pcfs === undefined;
  ui.cancel.disabled = state !== 'running';
  ui.file.disabled = state === 'running';
  ui.generate.disabled = state === 'running';
}

/** New PCFs while a run is in flight would not be the ones its result belongs to. */
const BUSY = 'a computation is running: press Cancel (or wait for it to end), then load or generate PCFs';

function showError(error: unknown): void {
  ui.error.textContent = error instanceof Error ? error.message : String(error);
  ui.error.hidden = false;
}

function clearError(): void {
  ui.error.hidden = true;
  ui.error.textContent = '';
}

const count = (n: number): string => n.toLocaleString('en-US');
/** "1 PCF", "2,000 PCFs". */
const plural = (n: number, word: string): string => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** Makes `set` the loaded PCFs (from a file or the generator); the previous result goes. */
function usePcfs(set: PcfSet, origin: string): void {
  pcfs = set;
  result = undefined;
  heatmap.clear();
  ui.result.hidden = true;
  const breakpoints = set.offsets[set.count] ?? 0;
  ui.dataset.textContent = `${plural(set.count, 'PCF')}, ${plural(breakpoints, 'breakpoint')} in all (${origin}).`;
  ui.progress.value = 0;
  ui.status.textContent = '';
  setState('idle');
}

async function loadFile(file: File): Promise<void> {
  if (running !== undefined) return showError(new Error(`${file.name}: not loaded: ${BUSY}`));
  clearError();
  try {
    const set = await readPcfFile(file);
    // Reading a large file takes a while, and Compute may have been pressed meanwhile.
    if (running !== undefined) return showError(new Error(`${file.name}: not loaded: ${BUSY}`));
    usePcfs(set, file.name);
  } catch (error) {
    showError(error);
  }
}

function generate(): void {
  if (running !== undefined) return;
  clearError();
  try {
    const n = ui.genN.valueAsNumber;
    const points = ui.genPoints.valueAsNumber;
    const seed = ui.genSeed.valueAsNumber;
    usePcfs(randomPcfs({ n, points, seed }), `random, seed ${seed}`);
  } catch (error) {
    showError(error);
  }
}

/** The GPU computes in float32 only: choosing it pins the dtype. */
function syncForm(): void {
  ui.pLabel.hidden = ui.operation.value !== 'lp';
  const gpu = ui.device.value === 'gpu';
  const float64 = ui.dtype.querySelector<HTMLOptionElement>('option[value="float64"]')!;
  float64.disabled = gpu;
  if (gpu) ui.dtype.value = 'float32';
}

async function compute(): Promise<void> {
  if (pcfs === undefined || running !== undefined) return;
  clearError();
  const set = pcfs;
  const controller = new AbortController();
  running = controller;
  setState('running');
  ui.progress.value = 0;
  ui.status.textContent = 'Computing…';
  const started = performance.now();
  let done = 0;
  let total = 0;
  try {
    const dtype = ui.dtype.value === 'float32' ? 'float32' : 'float64';
    const device = ui.device.value === 'gpu' ? 'gpu' : 'cpu';
    const run = await runOperation(set, {
      operation: ui.operation.value as Operation,
      p: ui.p.valueAsNumber,
      dtype,
      device,
      signal: controller.signal,
      onProgress: (progress) => {
        done = progress.pairsDone;
        total = progress.pairsTotal;
        ui.progress.value = total > 0 ? done / total : 1;
        // After Cancel the line keeps saying so until the run stops (at the next block).
        if (!controller.signal.aborted) ui.status.textContent = `${count(done)} of ${count(total)} pairs`;
      },
    });
    const seconds = (performance.now() - started) / 1000;
    ui.progress.value = 1;
    const where = device === 'gpu' ? 'the GPU' : cpuThreads === 1 ? 'one CPU thread' : `${cpuThreads} CPU cores`;
    // Clustering and drawing take the page's thread (about a second for 6,000 PCFs): say so first
    // and let the browser paint it.
    ui.status.textContent = `Computed in ${seconds.toFixed(2)} s; ordering and drawing…`;
    await new Promise((resolve) => setTimeout(resolve, 0));
    showResult(run, `${run.label} of ${plural(set.count, 'PCF')}, ${dtype}, on ${where}, in ${seconds.toFixed(2)} s.`);
    ui.status.textContent = `Done in ${seconds.toFixed(2)} s.`;
    setState('done');
  } catch (error) {
    if (error instanceof CancelledError) {
      ui.status.textContent = `Cancelled after ${count(done)} of ${total > 0 ? count(total) : 'all'} pairs; nothing was kept.`;
      setState('cancelled');
    } else {
      ui.status.textContent = 'Failed.';
      showError(error);
      setState('failed');
    }
  } finally {
    running = undefined;
    ui.cancel.disabled = true;
    ui.compute.disabled = pcfs === undefined;
  }
}

/** Entries per heatmap pixel for n items, in words: "1.6", "115". */
function perPixel(n: number): string {
  const entries = (n / HEATMAP_SIDE) ** 2;
  return entries >= 10 ? count(Math.round(entries)) : entries.toFixed(1);
}

function showResult(run: RunResult, summary: string): void {
  result = run;
  ui.result.hidden = false;
  ui.summary.textContent = summary;
  const view = run.view;
  const order = clusterOrder(view.n, view.dissimilarity);
  heatmap.draw(view, order, HEATMAP_SIDE);
  const range = heatmap.range!;
  ui.legendMin.textContent = range.min.toPrecision(3);
  ui.legendMax.textContent = range.max.toPrecision(3);
  ui.readout.textContent = view.n > HEATMAP_SIDE
    ? `Hover over the heatmap to read an entry (each pixel averages about ${perPixel(view.n)} entries; the readout is exact).`
    : 'Hover over the heatmap to read an entry.';
  ui.rowLine.hidden = true;
  ui.colLine.hidden = true;
  const plot = ui.plot.getContext('2d');
  plot?.clearRect(0, 0, ui.plot.width, ui.plot.height);
}

function inspect(event: MouseEvent): void {
  if (result === undefined || pcfs === undefined) return;
  const entry = heatmap.entryAt(event.clientX, event.clientY);
  if (entry === undefined) return;
  const box = ui.heatmap.getBoundingClientRect();
  ui.rowLine.style.top = `${event.clientY - box.top}px`;
  ui.colLine.style.left = `${event.clientX - box.left}px`;
  ui.rowLine.hidden = false;
  ui.colLine.hidden = false;
  ui.readout.textContent = `row ${entry.i}, column ${entry.j}: ${String(entry.value)}`;
  ui.readout.dataset.i = String(entry.i);
  ui.readout.dataset.j = String(entry.j);
  ui.readout.dataset.value = String(entry.value);
  ui.plotRow.textContent = `PCF ${entry.i}`;
  ui.plotCol.textContent = `PCF ${entry.j}`;
  plotPcfs(ui.plot, pcfs, [{ index: entry.i, color: ROW_COLOR }, { index: entry.j, color: COL_COLOR }]);
}

/** The way to a .npy too large for a page's memory. */
const TOO_LARGE = 'The command line writes a result this large to .npy block by block: pxl pdist (or pxl l2-kernel) PCFS.json -o OUT.npy';

/** Saves the result as .npy, or says why not: the square matrix and its file are made in memory. */
function download(): void {
  if (result === undefined) return;
  clearError();
  try {
    saveBytes(resultNpy(result), result.fileName);
  } catch (error) {
    const tooLarge = error instanceof OutOfMemoryError || error instanceof RangeError;
    const message = error instanceof Error ? error.message : String(error);
    showError(new Error(tooLarge ? `Download: ${message}. ${TOO_LARGE}` : `Download: ${message}`));
  }
}

async function describeBrowser(): Promise<void> {
  const caps = await browserCapabilities();
  cpuThreads = caps.crossOriginIsolated ? caps.cores : 1;
  const parts = [caps.crossOriginIsolated ? `${caps.cores} CPU cores (cross-origin isolated)` : 'one CPU thread (not cross-origin isolated)', caps.gpu ? 'WebGPU available' : 'no WebGPU'];
  ui.capabilities.textContent = `This browser: ${parts.join(', ')}.`;
  const cpuOption = ui.device.querySelector<HTMLOptionElement>('option[value="cpu"]')!;
  cpuOption.textContent = caps.crossOriginIsolated ? `CPU (${caps.cores} cores)` : 'CPU (one thread)';
  const gpuOption = ui.device.querySelector<HTMLOptionElement>('option[value="gpu"]')!;
  gpuOption.disabled = !caps.gpu;
  gpuOption.textContent = caps.gpu ? 'GPU (WebGPU, float32)' : 'GPU (unavailable)';
  if (!caps.gpu) {
    ui.deviceNote.textContent = 'GPU unavailable: this browser offers no WebGPU adapter (navigator.gpu is missing or gave none).';
    ui.deviceNote.hidden = false;
  }
  if (caps.warning !== undefined) {
    // Over plain http from another address (pxl web --host 0.0.0.0) the headers count for nothing.
    ui.warning.textContent = window.isSecureContext ? caps.warning : `${caps.warning}. Headers are not enough here: this page came over plain http from an address other than localhost, which browsers never isolate; open it at localhost on the machine serving it, or serve it over https`;
    ui.warning.hidden = false;
  }
}

function wire(): void {
  ui.legend.style.background = cssGradient();
  watchFileInputs(ui.file, ui.dropzone, (file) => void loadFile(file));
  ui.generateForm.addEventListener('submit', (event) => {
    event.preventDefault();
    generate();
  });
  ui.computeForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void compute();
  });
  ui.cancel.addEventListener('click', () => {
    running?.abort();
    ui.status.textContent = 'Cancelling…';
  });
  ui.operation.addEventListener('change', syncForm);
  ui.device.addEventListener('change', syncForm);
  ui.heatmap.addEventListener('mousemove', inspect);
  ui.download.addEventListener('click', download);
  syncForm();
}

wire();
setState('loading');
describeBrowser()
  .catch((error: unknown) => showError(error))
  .finally(() => setState('idle'));
