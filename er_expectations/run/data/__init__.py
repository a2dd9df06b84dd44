"""A checkpoint's data as one object (issue 32): the protocol the runner asks, :class:`~.base.CheckpointData`,
and one implementation per kind: files (:mod:`.files`), a database or Spark (:mod:`.engine`, with one
source per engine: :mod:`.sql`, :mod:`.duckdb`, :mod:`.spark`) and a labelling batch (:mod:`.labels`).
"""
