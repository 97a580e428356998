"""One solver's own behaviour (SolverVBD: colours, multipliers, large steps) and the Warp modules each loads."""
