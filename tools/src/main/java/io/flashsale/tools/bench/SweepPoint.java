package io.flashsale.tools.bench;

/**
 * One point of the sweep: a scenario (b1 admission or b2 end to end) at a client count and a
 * stock, with the JDBC ceiling measured at the same client count.
 *
 * @param throughputPerSecond created/s for b1, PAID orders/s for b2
 * @param soldOutPerSecond b1's SOLD_OUT answers/s once the stock is gone (0 for b2)
 */
public record SweepPoint(int clients, int stock, String scenario, long requests, double throughputPerSecond,
    double soldOutPerSecond, double p50Ms, double p99Ms, double jdbcThroughputPerSecond) {}
