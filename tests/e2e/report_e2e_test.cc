// Presets, sweep, report and compare end to end: real daemon, real client, fake worker.
