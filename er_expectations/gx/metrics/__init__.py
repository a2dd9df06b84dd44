"""GX metric providers: a batch aggregated once by its engine, every statistic derived from that."""
