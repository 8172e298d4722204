// An embedding worker whose module fails as it loads.
throw new Error("this worker is broken on purpose");
