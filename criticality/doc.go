// Package criticality says how much a call matters, so that under overload
// every limit sheds what can wait and keeps what cannot.
//
// A call carries a [Level] in its context, set where the request starts
// (With) and read by every limit it meets (From): Critical for what a user
// waits on (a checkout, a login), Default for what is unmarked, Sheddable
// for what can be dropped or done later (a prefetch, a background refresh,
// a batch job). An optional tenant (WithTenant) names who the call is for,
// so that a limit can keep one noisy tenant from taking its level's share
// (a bulkhead's or an adaptive limit's TenantShare).
//
//	ctx = criticality.With(ctx, criticality.Sheddable)
//	resp, err := client.Do(req.WithContext(ctx)) // the header goes with it
//
// The level crosses hops: pipelinehttp's transport sends it in the
// Resilience-Criticality header (and the tenant in Resilience-Tenant), the
// shed middleware reads them, and the gRPC client and server do the same in
// metadata. A server that serves callers it does not trust caps what they
// claim with its own policy (shed.Config.Criticality).
//
// Every limit decides by one rule, [Shares]: a call of a level may take a
// slot, a token or a unit of a quota only while the limit is filled below
// that level's share of it, Critical's being the whole limit. So when a
// limit fills, Sheddable calls are refused first, then Default ones, and a
// higher level is never refused while a lower one is admitted by the same
// limit at the same instant. Queues serve higher levels first. A bulkhead
// or an adaptive limit may also keep part of itself for the lower levels
// ([Guarantees]), so that a flood of Critical calls cannot starve them.
package criticality
