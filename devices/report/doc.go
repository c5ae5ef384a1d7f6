// Package report turns a solved neighbourhood into results people can
// read: the JSON result object of a homes run (the standard mva.Result plus
// the bill, the peak, the load profile, every home's schedule and the
// comparison with the baselines of package baseline), CSV tables, a text
// summary with a per-home schedule table and the load profile drawn in
// characters, PNG and SVG charts of the load profile with and without
// coordination, and the MQTT publications that put each home's plan on
// documented topics and, optionally, on a Home Assistant dashboard.
//
// Everything is built from one value, Homes, so the JSON, the CSV files,
// the summary and the charts cannot disagree. Power is reported in kW and
// money in the tariff's currency whatever the model's units (SHDS imports
// count deci-kWh per slot and cents; see devices.Units).
//
// # Fields of the JSON result
//
// Besides instance, sense, objective, feasible, optimal, assignment,
// algorithm and metrics (mva.Result):
//
//	neighbourhood, slot_minutes, slots   the name and each slot's start ("17:00")
//	currency                             of every cost below
//	energy_cost, energy_kwh              the coordinated schedule's bill and energy
//	peak_kw, load_kw                     its neighbourhood load per slot and the maximum
//	rules_satisfied, rules_total         over every rule of every home; rules_total
//	                                     includes rules_dropped, the rules no schedule
//	                                     keeps, of the homes in dropped_homes
//	flow_objective                       the bill plus the peak term on the load that
//	                                     flows (objective is on the committed levels;
//	                                     committed_slack_kw says by how much they
//	                                     exceed the load); objective_unit their unit
//	flow_lower_bound                     no plan's flow_objective is below it (complete
//	                                     graphs; null elsewhere)
//	mqtt                                 a run over MQTT's transport counters
//	goals_missed[]                       the soft goals missed: home, rule,
//	                                     missed (by how much), unit
//	feeder_excess_kw                     per window, kW above a soft feeder
//	                                     limit (omitted when kept)
//	baseline_peak_kw, baseline_energy_cost
//	                                     the uncoordinated baseline's
//	shmgm_peak_kw, shmgm_energy_cost     the SH-MGM-style baseline's
//	baselines.{uncoordinated,shmgm}      both in full (load_kw, objective, rounds,
//	                                     approximate_homes, coarse_homes, …)
//	baselines.missing[]                  each baseline not computed: name, reason
//	schedules[]                          per home: devices[] (action and kW per
//	                                     slot), load_kw, energy_kwh, energy_cost,
//	                                     peak_kw, levels, rules (rule, ok, hard,
//	                                     missed, unit), rules_satisfied
//	charts, notes                        files written; import warnings
//
// A baseline that was not computed is null, and named with why under
// baselines.missing.
package report
