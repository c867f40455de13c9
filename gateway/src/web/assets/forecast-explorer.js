// The forecast explorer's charts (uPlot, served by the gateway): history, forecast and its
// 80%/95% intervals; below, the supply plan's projected on-hand, planned receipts and safety stock.
(function () {
  'use strict';

  var day = function (iso) {
    return Date.parse(iso + 'T00:00:00Z') / 1000;
  };

  function widthOf(el) {
    return Math.max(320, Math.floor(el.getBoundingClientRect().width || 900));
  }

  function forecastChart(s, el) {
    var xs = [],
      history = [],
      forecast = [],
      lo95 = [],
      hi95 = [],
      lo80 = [],
      hi80 = [];
    s.history.forEach(function (p) {
      xs.push(day(p.date));
      history.push(p.quantity);
      forecast.push(null);
      lo95.push(null);
      hi95.push(null);
      lo80.push(null);
      hi80.push(null);
    });
    s.forecast.forEach(function (p) {
      xs.push(day(p.date));
      history.push(null);
      forecast.push(p.forecast);
      lo95.push(p.lo95);
      hi95.push(p.hi95);
      lo80.push(p.lo80);
      hi80.push(p.hi80);
    });
    var band = 'rgba(47,111,222,0.35)';
    var opts = {
      width: widthOf(el),
      height: 320,
      scales: { x: { time: true } },
      series: [
        {},
        { label: 'History', stroke: '#1d2433', width: 1.5 },
        { label: 'Forecast', stroke: '#2f6fde', width: 2 },
        { label: '95% low', stroke: band, dash: [4, 4] },
        { label: '95% high', stroke: band, dash: [4, 4] },
        { label: '80% low', stroke: band },
        { label: '80% high', stroke: band },
      ],
      bands: [
        { series: [4, 3], fill: 'rgba(47,111,222,0.10)' },
        { series: [6, 5], fill: 'rgba(47,111,222,0.22)' },
      ],
    };
    el.dataset.historyPoints = String(s.history.length);
    el.dataset.forecastPoints = String(s.forecast.length);
    return new uPlot(opts, [xs, history, forecast, lo95, hi95, lo80, hi80], el);
  }

  function planChart(data, el) {
    var rows = data.plan.rows;
    var il = data.itemLocation;
    var xs = rows.map(function (r) {
      return day(r.period_start);
    });
    var series = [
      {},
      { label: 'Projected on-hand', stroke: '#1d7a3a', width: 2 },
      { label: 'Planned receipts', stroke: '#c77700', fill: 'rgba(199,119,0,0.35)', paths: uPlot.paths.bars({ size: [0.6, 40] }) },
      { label: 'Gross requirements', stroke: '#69707d', dash: [2, 3] },
    ];
    var values = [
      xs,
      rows.map(function (r) {
        return r.projected_available;
      }),
      rows.map(function (r) {
        return r.planned_receipts;
      }),
      rows.map(function (r) {
        return r.gross_requirements;
      }),
    ];
    // A fixed safety stock is a level line; a service-level one is sized per plan (shown in the text above).
    if (il && !(il.service_level > 0)) {
      series.push({ label: 'Safety stock', stroke: '#b42318', dash: [6, 4] });
      values.push(
        rows.map(function () {
          return il.safety_stock;
        }),
      );
    }
    el.dataset.points = String(rows.length);
    return new uPlot({ width: widthOf(el), height: 280, scales: { x: { time: true } }, series: series }, values, el);
  }

  function start() {
    var source = document.getElementById('explorer-data');
    if (!source || typeof uPlot === 'undefined') return;
    var data = JSON.parse(source.textContent);
    var form = document.getElementById('pick');
    var itemLocation = document.getElementById('item-location');
    var group = document.getElementById('customer-group');
    if (itemLocation)
      itemLocation.addEventListener('change', function () {
        if (group) group.disabled = true;
        form.submit();
      });
    if (group)
      group.addEventListener('change', function () {
        form.submit();
      });
    var fc = document.getElementById('forecast-chart');
    if (data.selected && fc) window.forecastChart = forecastChart(data.selected, fc);
    var pc = document.getElementById('plan-chart');
    if (data.plan && pc) window.planChart = planChart(data, pc);
    document.body.dataset.chartsReady = 'true';
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
