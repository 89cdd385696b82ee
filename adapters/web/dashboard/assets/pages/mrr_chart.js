// @ts-check
// The overview's MRR chart: the monthly recurring revenue per currency at 00:00 UTC of each of
// the last 90 days, from GET /api/v1/{env}/billing_summary/mrr_history. A line drawn as SVG by
// this module like the daily volume beside it (see volume_chart.js and docs/dashboard.md for why
// there is no chart library), broken where a day has no data (before the history starts, or a
// midnight the server missed) rather than drawn down to zero, with its text alternative: a
// summary sentence that labels the chart, and every recorded day in a table one click away.
import { get } from '../api.js';
import { money } from '../format.js';
import { html, render } from '../preact.js';
import { errorText } from '../ui.js';

const width = 900;
const height = 160;

const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
/** @param {string} date YYYY-MM-DD, a UTC day */
const dayText = (date) => dayFormat.format(new Date(`${date}T00:00:00Z`));

/**
 * Chart is one currency's line with its summary and table.
 * @param {{ series: import('../types').Schemas['MrrHistoryCurrency'], days: number }} props
 */
function Chart({ series, days }) {
  const cur = series.currency;
  const recorded = series.days.filter((d) => d.amount !== null);
  const max = Math.max(0, ...recorded.map((d) => d.amount || 0));
  const slot = width / series.days.length;
  const x = (/** @type {number} */ i) => i * slot + slot / 2;
  const y = (/** @type {number} */ amount) => (max ? height - 2 - (amount / max) * (height - 4) : height - 2);
  // One path, a new segment after each day without data.
  let path = '';
  let open = false;
  series.days.forEach((d, i) => {
    if (d.amount === null) {
      open = false;
      return;
    }
    // A segment starts with a dot (h0.1 with round caps), so a lone recorded day shows.
    path += open ? `L${x(i).toFixed(1)} ${y(d.amount).toFixed(1)} ` : `M${x(i).toFixed(1)} ${y(d.amount).toFixed(1)} h0.1 `;
    open = true;
  });
  const first = recorded[0];
  const last = recorded[recorded.length - 1];
  const captionID = `mrr-caption-${cur}`;
  return html`<figure class="volume-chart mrr-chart" data-currency=${cur}>
    <figcaption id=${captionID}>
      <strong>${cur}</strong>: ${last ? html`latest ${money(last.amount || 0, cur)} on ${dayText(last.date)}${first !== last ? html`, first recorded ${money(first.amount || 0, cur)} on ${dayText(first.date)}` : ''}; highest ${money(max, cur)}; ${recorded.length} of ${days} days recorded.` : 'no day recorded.'}
    </figcaption>
    <div class="chart-frame">
      <div class="chart-y" aria-hidden="true"><span>${money(max, cur)}</span><span>${money(0, cur)}</span></div>
      <svg class="chart-svg" role="img" aria-labelledby=${captionID} viewBox=${`0 0 ${width} ${height}`} preserveAspectRatio="none">
        <line class="chart-grid" x1="0" y1="0.5" x2=${width} y2="0.5" vector-effect="non-scaling-stroke" />
        <path class="chart-line" d=${path} vector-effect="non-scaling-stroke" />
        ${series.days.map((d, i) => (d.amount === null ? null : html`<rect class="chart-hit" x=${i * slot} y="0" width=${slot} height=${height}>
            <title>${dayText(d.date)}: ${money(d.amount, cur)}</title>
          </rect>`))}
        <line class="chart-axis" x1="0" y1=${height - 0.5} x2=${width} y2=${height - 0.5} vector-effect="non-scaling-stroke" />
      </svg>
    </div>
    <div class="chart-x" aria-hidden="true"><span>${dayText(series.days[0].date)}</span><span>${dayText(series.days[series.days.length - 1].date)}</span></div>
    <details class="chart-table">
      <summary>The recorded days in ${cur} as a table</summary>
      ${recorded.length ? html`<div class="table-wrap"><table>
        <caption class="visually-hidden">Monthly recurring revenue in ${cur} at the start of each recorded day</caption>
        <thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Monthly recurring revenue</th></tr></thead>
        <tbody>${recorded.map((d) => html`<tr><td>${dayText(d.date)}</td><td class="num">${money(d.amount || 0, cur)}</td></tr>`)}</tbody>
      </table></div>` : html`<p class="empty">No day in this range was recorded.</p>`}
    </details>
  </figure>`;
}

/**
 * MRRCharts is the overview's section: one chart per currency, or a line saying there is no
 * history yet.
 * @param {{ history: import('../types').Schemas['MrrHistory'] }} props
 */
export function MRRCharts({ history }) {
  const clock = history.environment === 'test' ? 'the test clock' : 'real time';
  return html`<section class="panel" aria-labelledby="mrr-history-title" id="mrr-history">
    <h2 id="mrr-history-title">Monthly recurring revenue, last ${history.days} days</h2>
    <p class="hint">At 00:00 UTC of each day, ${dayText(history.start_date)} to ${dayText(history.end_date)} by ${clock}; recorded daily from the first midnight after the first subscription, so earlier days have no data (a gap, not zero). Paused subscriptions add nothing.</p>
    ${history.currencies.length
      ? history.currencies.map((c) => html`<${Chart} key=${c.currency} series=${c} days=${history.days} />`)
      : html`<p class="empty">No recurring revenue recorded in the last ${history.days} days yet: the first figure is taken at the next midnight after a subscription starts.</p>`}
  </section>`;
}

/**
 * mrrSection reads the MRR history of ctx's environment and renders its charts into a new
 * element for a dom.js page.
 * @param {import('../types').Ctx} ctx
 * @returns {Promise<HTMLElement>}
 */
export async function mrrSection(ctx) {
  const el = document.createElement('div');
  try {
    const history = await get(`${ctx.base}/billing_summary/mrr_history`);
    render(html`<${MRRCharts} history=${history} />`, el);
  } catch (err) {
    // The figures above still stand; only the chart is missing.
    render(html`<p class="notice notice-error" role="alert" id="mrr-history">The recurring revenue history could not be loaded: ${errorText(err)}</p>`, el);
  }
  return el;
}
